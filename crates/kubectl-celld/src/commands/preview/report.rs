//! What `preview status` shows of one preview: its phase, URL, version, bucket, lifetime and
//! conditions, and the short state of the fleet it serves from; as a document for `-o
//! yaml|json` and as text. Pure: the preview, its fleet and the time are arguments.

use super::list;
use crate::text::human;
use crate::text::table::Table;
use celld_api::{CelldFleet, CelldPreview, PreviewPhase};
use jiff::Timestamp;
use serde::Serialize;

/// One preview, as `preview status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewReport {
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// The fleet it previews (spec.fleet).
    pub preview_of: String,
    /// Its phase; `Pending` until the operator reports one.
    pub phase: PreviewPhase,
    /// Where it is served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The Worker version it serves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The bucket URL of its data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bucket: Option<String>,
    /// spec.ttl; absent when the fleet's default applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
    /// The image the operator publishes the Worker from (spec.source.image).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_image: Option<String>,
    /// When it was created (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// When its TTL ends (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it expired, its fleet and data deleted (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expired_at: Option<String>,
    /// The fleet it serves from, while it exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetState>,
    /// Its conditions: Ready, and DataRemoved after expiry.
    pub conditions: Vec<ConditionRow>,
}

/// The short state of a preview's fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetState {
    /// Its name (the preview's).
    pub name: String,
    /// Its Ready condition's status (`True`, `False`), absent before the operator reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
    /// The Ready condition's reason and message when it is not True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_ready: Option<String>,
    /// Ready nodes.
    pub ready_replicas: i32,
    /// Nodes it should run.
    pub replicas: i32,
    /// The version its bucket pointer names, as the operator read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A condition of the preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionRow {
    /// Type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Reason.
    pub reason: String,
    /// Message.
    pub message: String,
    /// When the status last changed (RFC 3339).
    pub last_transition_time: String,
}

/// The short state of `fleet`.
pub fn fleet_state(fleet: &CelldFleet) -> FleetState {
    let status = fleet.status.as_ref();
    let ready = status
        .and_then(|s| celld_api::conditions::find(&s.conditions, celld_api::conditions::READY));
    FleetState {
        name: fleet.metadata.name.clone().unwrap_or_default(),
        ready: ready.map(|c| c.status.clone()),
        not_ready: ready
            .filter(|c| c.status != "True")
            .map(|c| format!("{}: {}", c.reason, c.message)),
        ready_replicas: status.map_or(0, |s| s.ready_replicas),
        replicas: fleet.spec.replicas,
        version: status
            .and_then(|s| s.deployment.as_ref())
            .map(|d| d.version.clone()),
    }
}

/// The report of `preview`, serving from `fleet` (its own, when it exists).
pub fn build(preview: &CelldPreview, fleet: Option<&CelldFleet>) -> PreviewReport {
    let status = preview.status.clone().unwrap_or_default();
    let time = |t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time| t.0.to_string();
    PreviewReport {
        name: preview.metadata.name.clone().unwrap_or_default(),
        namespace: preview.metadata.namespace.clone().unwrap_or_default(),
        preview_of: preview.spec.fleet.clone(),
        phase: status.phase,
        url: status.url,
        version: status.version,
        bucket: status.bucket,
        ttl: preview.spec.ttl.clone(),
        source_image: preview
            .spec
            .source
            .as_ref()
            .and_then(|s| s.image.as_ref())
            .map(|i| i.reference.clone()),
        created: preview.metadata.creation_timestamp.as_ref().map(time),
        expires_at: status.expires_at.as_ref().map(time),
        expired_at: status.expired_at.as_ref().map(time),
        fleet: fleet.map(fleet_state),
        conditions: status
            .conditions
            .iter()
            .map(|c| ConditionRow {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: time(&c.last_transition_time),
            })
            .collect(),
    }
}

const LABEL_WIDTH: usize = 12;

fn field(out: &mut String, label: &str, value: &str) {
    out.push_str(&format!("{:<LABEL_WIDTH$} {value}\n", format!("{label}:")));
}

fn parse(t: &Option<String>) -> Option<Timestamp> {
    t.as_deref().and_then(|t| t.parse().ok())
}

/// The Fleet field: the fleet's short state, or why there is none.
fn fleet_line(r: &PreviewReport) -> String {
    let Some(f) = &r.fleet else {
        return match r.phase {
            PreviewPhase::Expired => "none: deleted with its data at the TTL".to_string(),
            PreviewPhase::Expiring => "none: deleted at the TTL".to_string(),
            PreviewPhase::Failed => {
                "none: not created, the preview cannot be served (see its Ready condition)"
                    .to_string()
            }
            PreviewPhase::Pending | PreviewPhase::Ready => {
                format!("none yet: the operator creates CelldFleet {}", r.name)
            }
        };
    };
    let nodes = format!("{}/{} nodes ready", f.ready_replicas, f.replicas);
    let version = f.version.as_deref().map_or_else(
        || "no version deployed".to_string(),
        |v| format!("version {v}"),
    );
    match (f.ready.as_deref(), &f.not_ready) {
        (Some("True"), _) => format!("CelldFleet {}: Ready, {nodes}, {version}", f.name),
        (Some(_), Some(why)) => {
            format!(
                "CelldFleet {}: not ready ({why}), {nodes}, {version}",
                f.name
            )
        }
        _ => format!(
            "CelldFleet {}: not reported by the operator yet, {nodes}",
            f.name
        ),
    }
}

/// The Expires field: when, and how long until then or since.
fn expires_line(r: &PreviewReport, now: Timestamp) -> Option<String> {
    let at = r.expires_at.as_deref()?;
    let when = parse(&r.expires_at);
    let left = list::ttl_left(when, r.phase, now);
    Some(match (left.as_str(), when) {
        ("expired", Some(t)) => format!(
            "{at} (expired {} ago)",
            human::duration(now.as_second() - t.as_second())
        ),
        ("-", _) | ("expired", None) => at.to_string(),
        (left, _) => format!("{at} (in {left})"),
    })
}

/// `preview status` as text at `now`.
pub fn render(r: &PreviewReport, now: Timestamp) -> String {
    let mut out = String::new();
    field(&mut out, "Name", &r.name);
    field(&mut out, "Namespace", &r.namespace);
    field(
        &mut out,
        "Preview of",
        &format!("CelldFleet {}", r.preview_of),
    );
    field(&mut out, "Phase", r.phase.as_str());
    field(&mut out, "URL", r.url.as_deref().unwrap_or("-"));
    field(
        &mut out,
        "Version",
        r.version.as_deref().unwrap_or("none served yet"),
    );
    field(&mut out, "Fleet", &fleet_line(r));
    field(&mut out, "Bucket", r.bucket.as_deref().unwrap_or("-"));
    if let Some(image) = &r.source_image {
        field(
            &mut out,
            "Source",
            &format!("image {image} (published by the operator)"),
        );
    }
    field(&mut out, "Age", &human::age(parse(&r.created), now));
    field(
        &mut out,
        "TTL",
        &match &r.ttl {
            Some(ttl) => ttl.clone(),
            None => format!("CelldFleet {}'s spec.previews.ttl", r.preview_of),
        },
    );
    if let Some(line) = expires_line(r, now) {
        field(&mut out, "Expires", &line);
    }
    if let Some(at) = &r.expired_at {
        field(
            &mut out,
            "Expired",
            &format!("{at} ({} ago)", human::age(parse(&r.expired_at), now)),
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
                human::age(c.last_transition_time.parse().ok(), now),
                c.message.clone(),
            ]);
        }
        out.push_str(&t.render("  "));
    }
    out
}
