//! Waiting on a preview as the operator reports it: until its fleet exists, until it is Ready
//! (serving a version), and until it is gone after a deletion. Each wait prints a line whenever
//! where it stands changes, stops when the operator reports that the preview cannot be served
//! (with its reason), and ends at its timeout saying where the preview stood.

use crate::cluster::kubeconfig::Target;
use crate::cluster::previews;
use crate::error::preview::PreviewError;
use crate::error::{Error, Result};
use crate::text::progress::Progress;
use celld_api::{CelldFleet, CelldPreview, PreviewPhase};
use kube::{Api, Resource, ResourceExt};
use std::time::{Duration, Instant};

/// How often the preview is read while waiting.
const POLL: Duration = Duration::from_secs(1);

/// The finalizer that holds a deleted preview until its data is removed.
pub const FINALIZER: &str = "platform.celld.dev/preview-data";

/// Whether the operator's status of `preview` answers its generation `generation` (or later).
fn current(preview: &CelldPreview, generation: Option<i64>) -> bool {
    let observed = preview.status.as_ref().and_then(|s| s.observed_generation);
    generation.is_none_or(|g| observed.is_some_and(|o| o >= g))
}

/// Where `preview` stands, in words: its Ready condition (`REASON: message`), or that the
/// operator has not reported on it.
pub fn standing(preview: &CelldPreview, namespace: &str) -> String {
    match previews::ready(preview) {
        Some(c) => format!("{}: {}", c.reason, c.message),
        None => format!(
            "the operator has not reported on it yet (is celld-operator running and watching namespace {namespace}?)"
        ),
    }
}

/// The error when the operator reports, for generation `generation`, that `preview` cannot be
/// served: Failed, or past its TTL.
pub fn failed(preview: &CelldPreview, generation: Option<i64>) -> Option<PreviewError> {
    let phase = preview.status.as_ref()?.phase;
    let over = matches!(
        phase,
        PreviewPhase::Failed | PreviewPhase::Expiring | PreviewPhase::Expired
    );
    if !over || !current(preview, generation) {
        return None;
    }
    let (reason, message) = previews::ready(preview).map_or_else(
        || (phase.as_str().to_string(), "no Ready condition".to_string()),
        |c| (c.reason.clone(), c.message.clone()),
    );
    Some(PreviewError::Failed {
        name: preview.name_any(),
        namespace: preview.namespace().unwrap_or_default(),
        reason,
        message,
    })
}

/// Sleeps between two reads; Ctrl-C ends the wait, saying what exists.
async fn pause(name: &str, namespace: &str) -> Result<()> {
    tokio::select! {
        () = tokio::time::sleep(POLL) => Ok(()),
        _ = tokio::signal::ctrl_c() => Err(Error::Interrupted {
            note: format!(
                "while waiting on CelldPreview {namespace}/{name}, which stays as it is; see it with: kubectl celld preview status {name} -n {namespace}"
            ),
        }),
    }
}

/// Whether `fleet` is `preview`'s own: controlled by it.
fn is_own(fleet: &CelldFleet, preview: &CelldPreview) -> bool {
    let uid = preview.meta().uid.as_deref();
    fleet
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
}

/// Waits until the operator has created `applied`'s fleet (named like it, controlled by it).
pub async fn fleet(
    target: &Target,
    applied: &CelldPreview,
    timeout: Duration,
    progress: &mut Progress,
) -> Result<()> {
    let (name, ns) = (applied.name_any(), target.namespace.as_str());
    let generation = applied.metadata.generation;
    let fleets: Api<CelldFleet> = Api::namespaced(target.client.clone(), ns);
    let started = Instant::now();
    let mut last = None;
    loop {
        let preview = previews::get(target, &name).await?;
        if let Some(e) = failed(&preview, generation) {
            return Err(e.into());
        }
        let fleet = fleets
            .get_opt(&name)
            .await
            .map_err(|e| Error::api("get", crate::cluster::fleets::RESOURCE, Some(ns), e))?;
        if fleet.as_ref().is_some_and(|f| is_own(f, &preview)) {
            progress.note(&format!("CelldFleet {ns}/{name} exists"));
            return Ok(());
        }
        let now = standing(&preview, ns);
        if last.as_ref() != Some(&now) {
            progress.note(&format!(
                "Waiting for the operator to create CelldFleet {ns}/{name}: {now}"
            ));
        }
        if started.elapsed() >= timeout {
            return Err(PreviewError::TimedOut {
                name,
                namespace: ns.to_string(),
                what: "its fleet was not created".to_string(),
                waited: timeout,
                last: now,
            }
            .into());
        }
        last = Some(now);
        pause(&name, ns).await?;
    }
}

/// Waits until `applied` is Ready, serving `version` when given; returns it as read then.
pub async fn ready(
    target: &Target,
    applied: &CelldPreview,
    version: Option<&str>,
    timeout: Duration,
    progress: &mut Progress,
) -> Result<CelldPreview> {
    let (name, ns) = (applied.name_any(), target.namespace.as_str());
    let generation = applied.metadata.generation;
    let started = Instant::now();
    let mut last = None;
    loop {
        let preview = previews::get(target, &name).await?;
        if let Some(e) = failed(&preview, generation) {
            return Err(e.into());
        }
        let status = preview.status.as_ref();
        let serves = status.and_then(|s| s.version.as_deref());
        let is_ready =
            current(&preview, generation) && status.is_some_and(|s| s.phase == PreviewPhase::Ready);
        let now = match (is_ready, version) {
            (true, Some(wanted)) if serves != Some(wanted) => format!(
                "it serves version {}, not yet {wanted}",
                serves.unwrap_or("(none)")
            ),
            (true, _) => {
                progress.note(&format!(
                    "CelldPreview {ns}/{name} is Ready: {}",
                    standing(&preview, ns)
                ));
                return Ok(preview);
            }
            (false, _) => standing(&preview, ns),
        };
        if last.as_ref() != Some(&now) {
            progress.note(&format!(
                "Waiting for CelldPreview {ns}/{name} to be Ready: {now}"
            ));
        }
        if started.elapsed() >= timeout {
            return Err(PreviewError::TimedOut {
                name,
                namespace: ns.to_string(),
                what: "it is not Ready".to_string(),
                waited: timeout,
                last: now,
            }
            .into());
        }
        last = Some(now);
        pause(&name, ns).await?;
    }
}

/// Where a deleted preview stands: the DataRemoved condition, when the operator wrote one.
fn removal(preview: &CelldPreview) -> String {
    preview
        .status
        .as_ref()
        .and_then(|s| celld_api::conditions::find(&s.conditions, celld_api::conditions::DATA_REMOVED))
        .map_or_else(
            || {
                format!(
                    "the operator stops its nodes, empties its bucket prefix and deletes its fleet, then removes the finalizer {FINALIZER}"
                )
            },
            |c| format!("DataRemoved {}: {}", c.status, c.message),
        )
}

/// Waits until preview `name` no longer exists.
pub async fn gone(
    target: &Target,
    name: &str,
    timeout: Duration,
    progress: &mut Progress,
) -> Result<()> {
    let ns = target.namespace.as_str();
    let started = Instant::now();
    let mut last = None;
    loop {
        let Some(preview) = previews::get_opt(target, name).await? else {
            progress.note(&format!("CelldPreview {ns}/{name} is gone"));
            return Ok(());
        };
        let now = removal(&preview);
        if last.as_ref() != Some(&now) {
            progress.note(&format!(
                "Waiting for CelldPreview {ns}/{name} to be gone: {now}"
            ));
        }
        if started.elapsed() >= timeout {
            return Err(PreviewError::TimedOut {
                name: name.to_string(),
                namespace: ns.to_string(),
                what: "it still exists".to_string(),
                waited: timeout,
                last: format!(
                    "{now}; the finalizer {FINALIZER} keeps it until the operator has removed its data (is celld-operator running and watching namespace {ns}?)"
                ),
            }
            .into());
        }
        last = Some(now);
        pause(name, ns).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{CelldPreviewSpec, CelldPreviewStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

    fn preview(phase: PreviewPhase, observed: Option<i64>) -> CelldPreview {
        let mut p = CelldPreview::new(
            "pr-1",
            CelldPreviewSpec {
                fleet: "web".into(),
                ttl: Some("3h".into()),
                source: None,
            },
        );
        p.metadata.namespace = Some("apps".into());
        p.metadata.generation = Some(2);
        p.status = Some(CelldPreviewStatus {
            observed_generation: observed,
            phase,
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: "False".into(),
                reason: "TtlTooLong".into(),
                message: "spec.ttl 3h is longer than the 2h CelldFleet web allows".into(),
                last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    "2026-12-01T10:00:00Z".parse().unwrap(),
                ),
                observed_generation: observed,
            }],
            ..CelldPreviewStatus::default()
        });
        p
    }

    #[test]
    fn a_failure_counts_once_the_operator_judged_the_generation_applied() {
        assert_eq!(
            failed(&preview(PreviewPhase::Failed, Some(1)), Some(2)),
            None
        );
        let e = failed(&preview(PreviewPhase::Failed, Some(2)), Some(2)).unwrap();
        insta::assert_snapshot!(e.to_string(), @"CelldPreview apps/pr-1 failed: TtlTooLong: spec.ttl 3h is longer than the 2h CelldFleet web allows (details: kubectl celld preview status pr-1 -n apps)");
        assert!(failed(&preview(PreviewPhase::Expired, Some(2)), Some(2)).is_some());
        assert_eq!(
            failed(&preview(PreviewPhase::Pending, Some(2)), Some(2)),
            None
        );
    }

    #[test]
    fn standing_says_when_the_operator_has_not_reported() {
        let mut p = preview(PreviewPhase::Pending, None);
        assert!(standing(&p, "apps").starts_with("TtlTooLong: spec.ttl 3h"));
        p.status = None;
        insta::assert_snapshot!(standing(&p, "apps"), @"the operator has not reported on it yet (is celld-operator running and watching namespace apps?)");
    }
}
