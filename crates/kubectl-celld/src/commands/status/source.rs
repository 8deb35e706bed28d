//! `status FLEET` of a fleet whose Worker comes from spec.source: the chain from the source to
//! the nodes. The source (and whether publishing from it is suspended), the revision it names,
//! the last deploy Job, the last revision published, the version the bucket pointer names, how
//! many nodes serve it, and the SourceSynced condition. Pure: the time is an argument.

use super::report::{ConditionReport, FleetReport, SourceReport, SuspendedReport};
use crate::cluster::source::{self, SOURCE_SYNCED, Suspension};
use crate::text::human;
use celld_api::{CelldFleet, PublishAttempt, PublishPhase};
use jiff::Timestamp;

/// The source report of `fleet`, None without spec.source; `conditions` are the fleet's.
pub fn report(fleet: &CelldFleet, conditions: &[ConditionReport]) -> Option<SourceReport> {
    let spec = source::of(fleet)?;
    Some(SourceReport {
        image: spec.image.as_ref().map(|i| i.reference.clone()),
        source_ref: spec
            .source_ref
            .as_ref()
            .map(|r| format!("{}/{}", r.kind.as_str(), r.name)),
        path: spec.path.clone(),
        drift_policy: spec.drift_policy,
        suspended: source::suspension(fleet).map(|s| match s {
            Suspension::Spec => SuspendedReport {
                by: "spec",
                reason: None,
            },
            Suspension::Annotation(reason) => SuspendedReport {
                by: "annotation",
                reason: Some(reason),
            },
        }),
        observed: fleet
            .status
            .as_ref()
            .and_then(|s| s.source.as_deref().cloned())
            .unwrap_or_default(),
        synced: conditions
            .iter()
            .find(|c| c.type_ == SOURCE_SYNCED)
            .cloned(),
    })
}

fn ago(rfc3339: &str, now: Timestamp) -> String {
    match rfc3339.parse::<Timestamp>() {
        Ok(t) => format!("{} ago", human::age(Some(t), now)),
        Err(_) => format!("at {rfc3339}"),
    }
}

fn plural(n: i32, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn phase(p: PublishPhase) -> &'static str {
    match p {
        PublishPhase::Running => "Running",
        PublishPhase::Succeeded => "Succeeded",
        PublishPhase::Failed => "Failed",
    }
}

fn attempt(a: &PublishAttempt, desired: Option<&str>, now: Timestamp) -> String {
    let mut s = format!(
        "Job {} {}, attempt {}, {}, started {}",
        a.job,
        phase(a.phase),
        a.attempt,
        plural(a.failures, "failure"),
        ago(&a.started_at, now)
    );
    if let Some(end) = &a.finished_at {
        s.push_str(&format!(", ended {}", ago(end, now)));
    }
    if desired != Some(a.revision.as_str()) {
        s.push_str(&format!(" (revision {})", a.revision));
    }
    if let Some(message) = a.message.as_deref().filter(|m| !m.is_empty()) {
        s.push_str(&format!(": {message}"));
    }
    s
}

/// The bucket line: the version the pointer names, and whether it is the published one.
fn bucket(r: &FleetReport, s: &SourceReport, now: Timestamp) -> String {
    let published = s
        .observed
        .last_published
        .as_ref()
        .and_then(|p| p.version.as_deref());
    let drift = s.observed.drift.as_ref().map(|d| {
        format!(
            "drift since {}, {} by the operator",
            ago(&d.since, now),
            plural(d.corrections, "correction")
        )
    });
    let Some(worker) = &r.worker else {
        return match drift {
            Some(drift) => format!("no deployment pointer ({drift})"),
            None => "no deployment pointer read".to_string(),
        };
    };
    let relation = match (published, drift) {
        (_, Some(drift)) => format!("NOT the published version: {drift}"),
        (Some(p), None) if p == worker.version => "the published version".to_string(),
        (Some(_), None) => "not the published version".to_string(),
        (None, None) => "nothing published from the source yet".to_string(),
    };
    format!("version {} ({relation})", worker.version)
}

/// The Source field of `status FLEET`: one line per link of the chain.
pub fn render(r: &FleetReport, s: &SourceReport, now: Timestamp) -> String {
    let name = match (&s.image, &s.source_ref) {
        (Some(image), _) => format!("image {image}"),
        (None, Some(r)) => r.clone(),
        (None, None) => "-".to_string(),
    };
    let o = &s.observed;
    let desired = o.desired.as_ref().map(|d| d.revision.as_str());
    let mut lines = vec![format!(
        "{name}, path {}, driftPolicy {}",
        s.path,
        source::policy(s.drift_policy)
    )];
    lines.push(match &s.suspended {
        None => "suspended:  no".to_string(),
        Some(SuspendedReport { by: "spec", .. }) => {
            "suspended:  yes, spec.source.suspend is true".to_string()
        }
        Some(SuspendedReport { reason, .. }) => format!(
            "suspended:  yes, {} (resume: {})",
            Suspension::Annotation(reason.clone().unwrap_or_default()).describe(),
            source::resume_command(&r.name, &r.namespace)
        ),
    });
    lines.push(format!(
        "desired:    {}",
        o.desired.as_ref().map_or_else(
            || "not reported yet".to_string(),
            |d| match &d.digest {
                Some(digest) if !d.revision.contains(digest.as_str()) => {
                    format!("{} (digest {digest})", d.revision)
                }
                _ => d.revision.clone(),
            }
        )
    ));
    lines.push(format!(
        "attempted:  {}",
        o.last_attempted
            .as_ref()
            .map_or_else(|| "none".to_string(), |a| attempt(a, desired, now))
    ));
    lines.push(format!(
        "published:  {}",
        o.last_published.as_ref().map_or_else(
            || "nothing yet".to_string(),
            |p| format!(
                "{} as version {}, {}",
                p.revision,
                p.version.as_deref().unwrap_or("-"),
                ago(&p.published_at, now)
            )
        )
    ));
    lines.push(format!("bucket:     {}", bucket(r, s, now)));
    if let Some(adopted) = r.worker.as_ref().and_then(|w| w.adopted.as_deref()) {
        lines.push(format!("nodes:      {adopted} serve the bucket's version"));
    }
    lines.push(match &s.synced {
        Some(c) => format!("synced:     {} {}: {}", c.status, c.reason, c.message),
        None => format!("synced:     no {SOURCE_SYNCED} condition reported yet"),
    });
    lines.join("\n")
}
