//! What one decision on a fleet's spec.source starts from and ends in (the pure
//! [`decide`](crate::source::decide) step's input and output), its limits, and the small
//! pieces the steps share: timestamps, the backoff and the SourceSynced condition's forms.

use crate::source::job_state::JobSeen;
use crate::source::wanted::{Revision, Wanted};
use celld_api::reasons::Reason;
use celld_api::{SourceStatus, WorkerSource};
use k8s_openapi::jiff::Timestamp;
use std::time::Duration;

/// The first wait after a failed publish; it doubles with every failure.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(30);
/// The longest wait between publishes of one revision.
pub const MAX_BACKOFF: Duration = Duration::from_secs(600);
/// Corrections of drift within this window...
pub const CORRECTION_WINDOW: Duration = Duration::from_secs(600);
/// ...that stall the fleet: another writer keeps deploying.
pub const MAX_CORRECTIONS: i32 = 3;
/// Published revisions kept in status.source.history.
pub const HISTORY: usize = 5;

/// What the bucket's pointer names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bucket {
    /// A version.
    Deployed(String),
    /// No deployment.
    Missing,
    /// The bucket could not be read.
    Unknown,
}

/// What one decision starts from.
pub struct Input<'a> {
    /// spec.source.
    pub spec: &'a WorkerSource,
    /// The revision it names now.
    pub wanted: &'a Wanted,
    /// Why publishing is suspended, if it is.
    pub suspended: Option<&'a str>,
    /// status.source as the cache holds it.
    pub previous: Option<&'a SourceStatus>,
    /// The publish key of the wanted revision (see [`key`](crate::source::wanted::key)).
    pub key: &'a str,
    /// The name of the wanted revision's Jobs, without the attempt number.
    pub job_base: &'a str,
    /// The Job previous.lastAttempted names, as cached.
    pub job: &'a JobSeen,
    /// The bucket's pointer, read after that Job ended.
    pub bucket: &'a Bucket,
    /// The wait after a first failed publish ([`FIRST_BACKOFF`] but in tests).
    pub first_backoff: Duration,
    /// Now.
    pub now: Timestamp,
}

/// A Job to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// Its name.
    pub name: String,
    /// The revision it publishes.
    pub desired: Revision,
}

/// How the SourceSynced condition reads, and what it means for the fleet's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    /// True, False, or Unknown (None).
    pub status: Option<bool>,
    /// Why.
    pub reason: Reason,
    /// What a person reads.
    pub message: String,
    /// Whether only a person can end it (kstatus Stalled).
    pub stalled: bool,
    /// Whether it ends by itself (kstatus Reconciling).
    pub progressing: bool,
}

/// The outcome of one decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The next status.source.
    pub status: SourceStatus,
    /// SourceSynced.
    pub synced: Synced,
    /// The Job to start, if any.
    pub start: Option<Start>,
    /// The Jobs of the fleet to keep: every other finished one, and a running one of another
    /// key, is deleted.
    pub keep: Vec<String>,
    /// When to look again (a retry after backoff).
    pub wake_at: Option<Timestamp>,
    /// A Warning to publish: drift seen for the first time (or a new version).
    pub drift_warning: Option<String>,
}

pub(super) fn stamp(t: Timestamp) -> String {
    t.to_string()
}

pub(super) fn parse(t: &str) -> Option<Timestamp> {
    t.parse().ok()
}

/// The wait before attempt `failures + 1`, after `failures` failed ones, the first wait
/// being `first`.
pub fn backoff(first: Duration, failures: i32) -> Duration {
    let doublings = u32::try_from(failures.saturating_sub(1))
        .unwrap_or(0)
        .min(10);
    first.saturating_mul(1 << doublings).min(MAX_BACKOFF)
}

pub(super) fn synced(status: Option<bool>, reason: Reason, message: impl Into<String>) -> Synced {
    Synced {
        status,
        reason,
        message: message.into(),
        stalled: false,
        progressing: false,
    }
}

pub(super) fn plural(n: i32, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

pub(super) fn publishing(message: String) -> Synced {
    Synced {
        progressing: true,
        ..synced(Some(false), Reason::Publishing, message)
    }
}
