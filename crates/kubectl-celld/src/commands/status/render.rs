//! The text form of `status FLEET`. Pure: the time to compute ages from is an argument.

use super::report::{FleetReport, RolloutReport, StorageReport};
use crate::text::human;
use crate::text::table::Table;
use celld_api::{BucketUrl, Scheme};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

const LABEL_WIDTH: usize = 12;

fn field(out: &mut String, label: &str, value: &str) {
    let mut lines = value.lines();
    let first = lines.next().unwrap_or_default();
    out.push_str(&format!("{:<LABEL_WIDTH$} {first}\n", format!("{label}:")));
    for line in lines {
        out.push_str(&format!("{:<LABEL_WIDTH$} {line}\n", ""));
    }
}

fn age(t: &Option<Time>, now: Timestamp) -> String {
    human::age(t.as_ref().map(|t| t.0), now)
}

fn worker(r: &FleetReport) -> String {
    let (w, fleet, reported) = (&r.worker, &r.name, r.status_reported);
    let deployed_unknown = r
        .conditions
        .iter()
        .find(|c| c.type_ == celld_api::conditions::DEPLOYED)
        .filter(|c| c.status == "Unknown");
    if w.is_none()
        && let Some(why) = r
            .storage
            .error
            .clone()
            .or_else(|| deployed_unknown.map(|c| c.message.clone()))
    {
        return format!("unknown: the bucket cannot be read ({why})");
    }
    match w {
        Some(w) => {
            let mut s = format!("version {}", w.version);
            let mut extra = Vec::new();
            if let Some(script) = &w.script_name {
                extra.push(format!("script {script}"));
            }
            if let Some(p) = w.rollout_percent {
                extra.push(format!("{p}% of traffic"));
            }
            if !extra.is_empty() {
                s.push_str(&format!(" ({})", extra.join(", ")));
            }
            if let Some(adopted) = &w.adopted {
                s.push_str(&format!("; served by {adopted} nodes"));
            }
            s
        }
        None if reported => format!(
            "none deployed: the bucket prefix has no deploy/current.json (nodes cannot start without it); run: kubectl celld deploy DIR --fleet {fleet}"
        ),
        None => "unknown: the operator has not reported this fleet's status yet".to_string(),
    }
}

/// The Storage field: bucket and store, the store's connection, the credentials line.
pub fn storage(s: &StorageReport) -> String {
    if let Some(err) = &s.error {
        return format!("{}\nERROR: {err}", s.bucket);
    }
    let mut out = s.bucket.clone();
    match &s.store {
        Some(store) => out.push_str(&format!(" via CelldObjectStore {store}")),
        None => out.push_str(" (inline connection)"),
    }
    let scheme = BucketUrl::parse(&s.bucket).map(|b| b.scheme).ok();
    match scheme {
        Some(Scheme::Gcs) => out.push_str("\nGoogle Cloud Storage"),
        Some(Scheme::Azure) => out.push_str(&format!(
            "\nAzure Blob Storage, storage account {}",
            s.azure_storage_account.as_deref().unwrap_or("-")
        )),
        _ => out.push_str(&format!(
            "\nendpoint {}, region {}",
            s.endpoint.as_deref().unwrap_or("AWS S3 (default)"),
            s.region.as_deref().unwrap_or("-")
        )),
    }
    out.push('\n');
    out.push_str(&credentials(s, scheme.unwrap_or(Scheme::S3)));
    out
}

/// The credentials line: the Secret and whether it exists, or the workload identity of the
/// fleet's ServiceAccount.
fn credentials(s: &StorageReport, scheme: Scheme) -> String {
    let Some(secret) = &s.credentials_secret else {
        return match &s.service_account {
            Some(sa) => format!("credentials: workload identity through ServiceAccount {sa}"),
            None => "credentials: workload identity through ServiceAccount default (spec.serviceAccountName is not set)".to_string(),
        };
    };
    let state = match s.secret_exists {
        Some(true) => "exists".to_string(),
        Some(false) => format!(
            "MISSING: create it with {}",
            celld_api::resolve::needed_keys(&[scheme])
        ),
        None => "not checked".to_string(),
    };
    format!("credentials from Secret {secret} ({state})")
}

fn rollout(r: &RolloutReport) -> String {
    if !r.found {
        return format!(
            "StatefulSet {} not found: the operator has not created it (is the operator running? see Conditions and Events)",
            r.stateful_set
        );
    }
    let mut s = format!(
        "StatefulSet {}: {}/{} ready, {}/{} updated",
        r.stateful_set, r.ready_replicas, r.replicas, r.updated_replicas, r.replicas
    );
    match (&r.current_revision, &r.update_revision) {
        (Some(c), Some(u)) if c != u => s.push_str(&format!(", revision {c} (rolling to {u})")),
        (_, Some(u)) => s.push_str(&format!(", revision {u}")),
        (Some(c), None) => s.push_str(&format!(", revision {c}")),
        (None, None) => {}
    }
    if !r.spec_observed {
        s.push_str("\nthe operator has not yet acted on the latest spec change");
    }
    if let Some(upgrade) = &r.upgrade {
        s.push_str(&format!("\nupgrade: {upgrade}"));
    }
    s
}

/// spec.replicas; with spec.autoscaling only where the fleet starts.
fn replicas(r: &FleetReport) -> String {
    match &r.autoscaling {
        Some(_) => format!(
            "{} (where the fleet starts: spec.autoscaling sets the number of nodes)",
            r.replicas
        ),
        None => r.replicas.to_string(),
    }
}

/// Renders the report as text.
pub fn render(r: &FleetReport, now: Timestamp) -> String {
    let mut out = String::new();
    field(&mut out, "Name", &r.name);
    field(&mut out, "Namespace", &r.namespace);
    field(&mut out, "Age", &age(&r.created, now));
    field(&mut out, "URL", r.url.as_deref().unwrap_or("-"));
    field(&mut out, "Image", &r.image);
    field(&mut out, "Replicas", &replicas(r));
    if let Some(source) = &r.source {
        field(&mut out, "Source", &super::source::render(r, source, now));
    }
    field(&mut out, "Worker", &worker(r));
    field(&mut out, "Storage", &storage(&r.storage));
    field(&mut out, "Rollout", &rollout(&r.rollout));

    if r.pods.is_empty() {
        field(&mut out, "Pods", "none");
    } else {
        out.push_str("Pods:\n");
        let mut t = Table::new(&[
            "NAME", "STATUS", "READY", "RESTARTS", "AGE", "IP", "NODE", "IMAGE",
        ]);
        for p in &r.pods {
            t.row(vec![
                p.name.clone(),
                p.phase.clone(),
                p.ready.clone(),
                p.restarts.to_string(),
                age(&p.created, now),
                p.ip.clone().unwrap_or_else(|| "-".into()),
                p.node.clone().unwrap_or_else(|| "-".into()),
                p.image.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        out.push_str(&t.render("  "));
    }

    if !r.nodes.is_empty() {
        out.push_str("Nodes:\n");
        let mut t = Table::new(&["NAME", "SERVES", "ADOPTION", "RESTORING", "MESSAGE"]);
        for n in &r.nodes {
            t.row(vec![
                n.name.clone(),
                n.version.clone().unwrap_or_else(|| "-".into()),
                n.adoption.as_str().to_string(),
                n.restoring.map_or_else(|| "-".into(), |c| c.to_string()),
                n.message.clone().unwrap_or_default(),
            ]);
        }
        out.push_str(&t.render("  "));
    }

    if let Some(c) = &r.capacity {
        field(&mut out, "Capacity", &super::capacity::summary(c, now));
        out.push_str(&super::capacity::table(c, "  "));
    }
    if let Some(a) = &r.autoscaling {
        field(
            &mut out,
            "Autoscaling",
            &super::capacity::render_autoscaling(a, now),
        );
    }

    if r.conditions.is_empty() {
        field(&mut out, "Conditions", "none reported");
    } else {
        out.push_str("Conditions:\n");
        let mut t = Table::new(&["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"]);
        for c in &r.conditions {
            t.row(vec![
                c.type_.clone(),
                c.status.clone(),
                c.reason.clone(),
                age(&c.last_transition_time, now),
                c.message.clone(),
            ]);
        }
        out.push_str(&t.render("  "));
    }

    if r.events.is_empty() {
        field(&mut out, "Events", "none");
    } else {
        out.push_str("Events:\n");
        let mut t = Table::new(&["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
        for e in &r.events {
            let seen = age(&e.last_seen, now);
            t.row(vec![
                if e.count > 1 {
                    format!("{seen} (x{})", e.count)
                } else {
                    seen
                },
                e.type_.clone(),
                e.reason.clone(),
                e.object.clone(),
                e.message.clone(),
            ]);
        }
        out.push_str(&t.render("  "));
    }

    if !r.warnings.is_empty() {
        out.push_str("Warnings:\n");
        for w in &r.warnings {
            out.push_str(&format!("  {w}\n"));
        }
    }
    out
}
