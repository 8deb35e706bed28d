//! A preview's status, from what its fleet allows and where it is in its life, and the Events
//! a change of it is worth. Pure.

use crate::preview::lifetime::PreviewVerdict;
use crate::status::note::Note;
use celld_api::conditions::DATA_REMOVED;
use celld_api::conditions::{self, READY};
use celld_api::reasons::Reason;
use celld_api::{CelldFleet, CelldPreview, CelldPreviewStatus, PreviewPhase};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::events::EventType;

/// Where the preview is in its life.
#[derive(Debug, Clone, Copy)]
pub enum Stage<'a> {
    /// Its fleet does not allow it as it is ([`PreviewVerdict::Refused`]'s reason and message):
    /// nothing applied.
    Refused(Reason, &'a str),
    /// A fleet of its name exists and is not its own.
    NameTaken,
    /// Its fleet is applied; as cached, once the watch shows it.
    Serving(Option<&'a CelldFleet>),
    /// Its TTL ended: its nodes are stopping and its data and fleet are being deleted; what
    /// that waits for.
    Expiring(&'a str),
    /// Its TTL ended and its fleet and the objects under its prefix (how many) are gone.
    Expired {
        /// When the last of it was deleted.
        at: Timestamp,
        /// Objects deleted under its prefix by the last erasure.
        removed: u64,
    },
}

/// The status of `preview` at `stage`, judged `verdict`, after `previous` (the newest one
/// known).
pub fn compute(
    preview: &CelldPreview,
    previous: Option<&CelldPreviewStatus>,
    verdict: &PreviewVerdict,
    stage: Stage<'_>,
    now: Timestamp,
) -> CelldPreviewStatus {
    let previous = previous.cloned().unwrap_or_default();
    let prev: &[Condition] = &previous.conditions;
    let generation = preview.metadata.generation;
    let name = preview.name_any();
    let ns = preview.namespace().unwrap_or_default();
    let condition = |type_: &str, status: bool, reason: Reason, message: String| {
        conditions::make(
            prev,
            type_,
            Some(status),
            reason.as_str(),
            message,
            generation,
            now,
        )
    };
    let (url, bucket) = match verdict {
        PreviewVerdict::Live { policy, .. } => (
            Some(policy.url(&name)),
            Some(policy.preview_bucket(&ns, &name)),
        ),
        PreviewVerdict::Refused { .. } => (previous.url.clone(), previous.bucket.clone()),
    };
    let bucket_text = bucket.clone().unwrap_or_else(|| "its prefix".to_string());
    let mut status = CelldPreviewStatus {
        observed_generation: generation,
        url,
        bucket,
        expires_at: verdict.expires_at().map(Time),
        version: previous.version.clone(),
        expired_at: previous.expired_at.clone(),
        claimed_bucket: previous.claimed_bucket.clone(),
        ..CelldPreviewStatus::default()
    };
    let (phase, ready, data) = match stage {
        Stage::Refused(reason, message) => (
            PreviewPhase::Failed,
            condition(READY, false, reason, message.to_string()),
            None,
        ),
        Stage::NameTaken => (
            PreviewPhase::Failed,
            condition(
                READY,
                false,
                Reason::NameTaken,
                format!(
                    "a CelldFleet named {name} already exists in namespace {ns} and is not this preview's: delete this preview and create it under another name"
                ),
            ),
            None,
        ),
        Stage::Serving(child) => {
            status.fleet = Some(name.clone());
            let served = child.and_then(|c| c.status.as_ref());
            status.version = served
                .and_then(|s| s.deployment.as_ref())
                .map(|d| d.version.clone())
                .or(status.version);
            let child_ready = served.and_then(|s| s.conditions.iter().find(|c| c.type_ == READY));
            match child_ready {
                Some(c) if c.status == "True" => (
                    PreviewPhase::Ready,
                    condition(
                        READY,
                        true,
                        Reason::Serving,
                        format!(
                            "CelldFleet {name} serves version {} at {}",
                            status.version.as_deref().unwrap_or("(unknown)"),
                            status.url.as_deref().unwrap_or("its Service")
                        ),
                    ),
                    None,
                ),
                Some(c) => (
                    PreviewPhase::Pending,
                    condition(
                        READY,
                        false,
                        Reason::FleetNotReady,
                        format!(
                            "CelldFleet {name} is not ready ({}): {}",
                            c.reason, c.message
                        ),
                    ),
                    None,
                ),
                None => (
                    PreviewPhase::Pending,
                    condition(
                        READY,
                        false,
                        Reason::FleetNotReady,
                        format!("CelldFleet {name} is being created"),
                    ),
                    None,
                ),
            }
        }
        Stage::Expiring(waiting) => {
            status.fleet = Some(name.clone());
            (
                PreviewPhase::Expiring,
                condition(
                    READY,
                    false,
                    Reason::Expiring,
                    format!(
                        "the TTL ended at {}: stopping the nodes, then deleting the objects under {bucket_text} and CelldFleet {name}",
                        expiry(&status)
                    ),
                ),
                Some(condition(
                    DATA_REMOVED,
                    false,
                    Reason::DataNotRemoved,
                    format!("waiting for {waiting}"),
                )),
            )
        }
        Stage::Expired { at, removed } => {
            status.expired_at = status.expired_at.or(Some(Time(at)));
            (
                PreviewPhase::Expired,
                condition(
                    READY,
                    false,
                    Reason::Expired,
                    format!(
                        "the TTL ended at {}: CelldFleet {name} and its data are deleted; delete this preview, or create another to serve again",
                        expiry(&status)
                    ),
                ),
                Some(condition(
                    DATA_REMOVED,
                    true,
                    Reason::DataRemoved,
                    format!("deleted {removed} object(s) under {bucket_text}"),
                )),
            )
        }
    };
    status.phase = phase;
    status.conditions = [Some(ready), data].into_iter().flatten().collect();
    status
}

fn expiry(status: &CelldPreviewStatus) -> String {
    status
        .expires_at
        .as_ref()
        .map_or_else(|| "(unknown)".to_string(), |t| t.0.to_string())
}

/// The Events going from `previous` to `next` is worth: a refusal (once per reason), the
/// preview's first readiness, and its expiry.
pub fn notes(previous: Option<&CelldPreviewStatus>, next: &CelldPreviewStatus) -> Vec<Note> {
    let ready = |s: Option<&CelldPreviewStatus>| -> Option<Condition> {
        s.and_then(|s| s.conditions.iter().find(|c| c.type_ == READY).cloned())
    };
    let (before, after) = (ready(previous), ready(Some(next)));
    let Some(after) = after else {
        return Vec::new();
    };
    let same = before
        .as_ref()
        .is_some_and(|b| b.status == after.status && b.reason == after.reason);
    if same {
        return Vec::new();
    }
    let previous_phase = previous.map(|p| p.phase);
    match next.phase {
        PreviewPhase::Failed => vec![Note {
            type_: EventType::Warning,
            reason: after.reason,
            note: after.message,
        }],
        PreviewPhase::Ready if previous_phase != Some(PreviewPhase::Ready) => vec![Note {
            type_: EventType::Normal,
            reason: Reason::Serving.as_str().to_string(),
            note: after.message,
        }],
        PreviewPhase::Expired => {
            let removed = next
                .conditions
                .iter()
                .find(|c| c.type_ == DATA_REMOVED)
                .map(|c| c.message.clone())
                .unwrap_or_default();
            vec![Note {
                type_: EventType::Normal,
                reason: Reason::Expired.as_str().to_string(),
                note: format!("{}; {removed}", after.message),
            }]
        }
        _ => Vec::new(),
    }
}
