//! The publishing of a fleet's spec.source as one pure step: from the revision wanted, the
//! state of the last deploy Job, the bucket's pointer and the fleet's last status.source, the
//! next status.source, the Job to start (if any), the Jobs to keep, when to look again and the
//! SourceSynced condition.
//!
//! Everything that must survive a restart is in status.source, and every step can be taken
//! again from a stale copy of it: a Job's name is derived from the publish key and the attempt
//! number (creating it twice adopts the first), a result is recorded from the Job (kept until
//! the status that records it is in the cache), and failures are counted per key.

use crate::reason::Reason;
use crate::source::job_state::JobSeen;
use crate::source::wanted::{Desired, Wanted, job_name};
use celld_api::{
    DriftPolicy, PublishAttempt, PublishPhase, PublishedRevision, SourceDrift, SourceRevision,
    SourceStatus, WorkerSource,
};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
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
    pub desired: Desired,
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

fn stamp(t: Timestamp) -> String {
    t.to_string()
}

fn parse(t: &str) -> Option<Timestamp> {
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

fn synced(status: Option<bool>, reason: Reason, message: impl Into<String>) -> Synced {
    Synced {
        status,
        reason,
        message: message.into(),
        stalled: false,
        progressing: false,
    }
}

/// Records what the Job of a running attempt ended with.
fn record(status: &mut SourceStatus, job: &JobSeen, bucket: &Bucket, now: Timestamp) {
    let Some(attempt) = status.last_attempted.as_mut() else {
        return;
    };
    if attempt.phase != PublishPhase::Running {
        return;
    }
    match job {
        JobSeen::Running { waiting, pod } => {
            if waiting.is_some() || *pod {
                attempt.message = waiting.clone();
            }
        }
        JobSeen::Missing => {}
        JobSeen::Failed { message } => {
            attempt.phase = PublishPhase::Failed;
            attempt.failures += 1;
            // What its pod waited for while it ran (the pod may be gone at the deadline).
            let waited = attempt
                .message
                .take()
                .filter(|w| !message.contains(w.as_str()))
                .map(|w| format!("; its pod waited: {w}"))
                .unwrap_or_default();
            attempt.message = Some(format!("{message}{waited}"));
            attempt.finished_at = Some(stamp(now));
        }
        JobSeen::Succeeded { image_id } => {
            attempt.phase = PublishPhase::Succeeded;
            attempt.message = None;
            attempt.finished_at = Some(stamp(now));
            let digest = status
                .desired
                .as_ref()
                .filter(|d| d.revision == attempt.revision)
                .and_then(|d| d.digest.clone())
                .or_else(|| image_id.clone());
            // The same publish key gives the same content, and celld the same version: a
            // correction of drift keeps the version already recorded, whatever another writer
            // put in the pointer since.
            let known = status
                .last_published
                .as_ref()
                .filter(|p| p.key == attempt.key)
                .and_then(|p| p.version.clone());
            let published = PublishedRevision {
                revision: attempt.revision.clone(),
                digest,
                version: known.or(match bucket {
                    Bucket::Deployed(v) => Some(v.clone()),
                    _ => None,
                }),
                published_at: stamp(now),
                key: attempt.key.clone(),
            };
            if let Some(old) = status.last_published.replace(published)
                && status
                    .last_published
                    .as_ref()
                    .is_some_and(|new| new.revision != old.revision)
            {
                status.history.insert(0, old);
                status.history.truncate(HISTORY);
            }
        }
    }
}

/// A new attempt of `desired` under `key`, number `attempt`, keeping the failures counted for
/// the key so far.
fn attempt(
    input: &Input,
    desired: &Desired,
    number: i32,
    failures: i32,
) -> (PublishAttempt, Start) {
    let name = job_name(input.job_base, number);
    (
        PublishAttempt {
            revision: desired.revision.clone(),
            job: name.clone(),
            attempt: number,
            failures,
            phase: PublishPhase::Running,
            message: None,
            started_at: stamp(input.now),
            finished_at: None,
            key: input.key.to_string(),
        },
        Start {
            name,
            desired: desired.clone(),
        },
    )
}

/// Decides the next step of publishing spec.source.
pub fn decide(input: &Input) -> Decision {
    let previous = input.previous.cloned().unwrap_or_default();
    let mut status = previous.clone();
    if let Wanted::Revision(d) = input.wanted {
        status.desired = Some(SourceRevision {
            revision: d.revision.clone(),
            digest: d.digest.clone(),
        });
    }
    record(&mut status, input.job, input.bucket, input.now);
    let mut keep: Vec<String> = [&previous, &status]
        .iter()
        .filter_map(|s| s.last_attempted.as_ref().map(|a| a.job.clone()))
        .collect();
    let mut decision = Decision {
        status,
        synced: synced(Some(true), Reason::Synced, ""),
        start: None,
        keep: Vec::new(),
        wake_at: None,
        drift_warning: None,
    };
    step(input, &mut decision);
    if let Some(start) = &decision.start {
        keep.push(start.name.clone());
    }
    keep.sort();
    keep.dedup();
    decision.keep = keep;
    decision
}

fn step(input: &Input, d: &mut Decision) {
    if let Some(why) = input.suspended {
        d.synced = synced(
            Some(false),
            Reason::Suspended,
            format!("publishing from spec.source is suspended: {why}"),
        );
        return;
    }
    let desired = match input.wanted {
        Wanted::Revision(desired) => desired,
        Wanted::Waiting {
            reason,
            message,
            stalled,
        } => {
            d.synced = Synced {
                stalled: *stalled,
                progressing: !*stalled,
                ..synced(Some(false), *reason, message.clone())
            };
            return;
        }
    };
    let published = d
        .status
        .last_published
        .as_ref()
        .is_some_and(|p| p.key == input.key);
    if published {
        drift(input, desired, d);
    } else {
        publish(input, desired, d, false);
    }
}

/// The wanted revision is not published: start, wait for or retry its Job.
fn publish(input: &Input, desired: &Desired, d: &mut Decision, correcting: bool) {
    let current = d
        .status
        .last_attempted
        .clone()
        .filter(|a| a.key == input.key);
    let what = if correcting {
        "publishing it again over the drift"
    } else {
        "publishing"
    };
    match current {
        None => {
            let (attempt, start) = attempt(input, desired, 1, 0);
            d.synced = publishing(format!(
                "{what} {} with Job {}",
                desired.revision, start.name
            ));
            d.status.last_attempted = Some(attempt);
            d.start = Some(start);
        }
        Some(a) if a.phase == PublishPhase::Running => {
            if *input.job == JobSeen::Missing {
                // Not in the cache yet, or deleted by hand: create it again (or adopt it).
                d.start = Some(Start {
                    name: a.job.clone(),
                    desired: desired.clone(),
                });
            }
            let waiting = a
                .message
                .as_deref()
                .map(|m| format!("; its pod waits: {m}"))
                .unwrap_or_default();
            d.synced = publishing(format!(
                "{what} {} with Job {} (attempt {}){waiting}",
                desired.revision, a.job, a.attempt
            ));
        }
        Some(a) if a.phase == PublishPhase::Failed => {
            let last = a.message.clone().unwrap_or_default();
            if a.failures >= input.spec.retries {
                d.synced = Synced {
                    stalled: true,
                    ..synced(
                        Some(false),
                        Reason::PublishFailed,
                        format!(
                            "publishing {} failed {} times (spec.source.retries), last with Job {}: {last}; the bucket keeps the version it serves. Fix the source and change it, or set the annotation platform.celld.dev/reconcile-requested-at to try again",
                            desired.revision, a.failures, a.job
                        ),
                    )
                };
                return;
            }
            let since = a
                .finished_at
                .as_deref()
                .and_then(parse)
                .unwrap_or(input.now);
            let retry_at = since
                .checked_add(
                    SignedDuration::try_from(backoff(input.first_backoff, a.failures))
                        .unwrap_or_default(),
                )
                .unwrap_or(since);
            if input.now >= retry_at {
                let (next, start) = attempt(input, desired, a.attempt + 1, a.failures);
                d.synced = publishing(format!(
                    "{what} {} again with Job {} after {} failed: {last}",
                    desired.revision,
                    start.name,
                    plural(a.failures, "attempt")
                ));
                d.status.last_attempted = Some(next);
                d.start = Some(start);
            } else {
                d.wake_at = Some(retry_at);
                d.synced = publishing(format!(
                    "publishing {} failed ({} of {} allowed): {last}; retrying at {retry_at}",
                    desired.revision,
                    plural(a.failures, "failure"),
                    input.spec.retries
                ));
            }
        }
        Some(a) => {
            // Succeeded under this key but not recorded as published: the result is in.
            d.synced = publishing(format!(
                "{} was published by Job {}",
                desired.revision, a.job
            ));
        }
    }
}

fn plural(n: i32, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn publishing(message: String) -> Synced {
    Synced {
        progressing: true,
        ..synced(Some(false), Reason::Publishing, message)
    }
}

/// The wanted revision is published: compare the bucket's pointer with what was published.
fn drift(input: &Input, desired: &Desired, d: &mut Decision) {
    let Some(published) = d.status.last_published.as_mut() else {
        return;
    };
    let seen = match input.bucket {
        Bucket::Unknown => {
            d.synced = synced(
                None,
                Reason::BucketUnreadable,
                format!(
                    "{} was published; the bucket cannot be read to check that it still serves it",
                    published.revision
                ),
            );
            return;
        }
        Bucket::Deployed(v) => Some(v.clone()),
        Bucket::Missing => None,
    };
    if published.version.is_none() && seen.is_some() {
        published.version = seen.clone();
    }
    if seen.is_some() && seen == published.version {
        let message = format!(
            "the bucket serves {} (version {})",
            published.revision,
            seen.as_deref().unwrap_or_default()
        );
        // A corrected drift is kept while its corrections count (see [`CORRECTION_WINDOW`]).
        let counting = d.status.drift.as_ref().is_some_and(|drift| {
            drift.corrections > 0 && !window_over(drift.corrections_since.as_deref(), input.now)
        });
        if !counting {
            d.status.drift = None;
        }
        d.synced = synced(Some(true), Reason::Synced, message);
        return;
    }
    let published_version = published.version.clone().unwrap_or_default();
    let now = input.now;
    let drift = d.status.drift.get_or_insert_with(|| SourceDrift {
        version: seen.clone(),
        since: stamp(now),
        corrections: 0,
        corrections_since: None,
    });
    let named = |v: &Option<String>| {
        v.as_deref()
            .map(|v| format!("version {v}"))
            .unwrap_or_else(|| "no deployment".into())
    };
    let first = drift.version != seen || drift.since == stamp(now);
    drift.version = seen.clone();
    let what = format!(
        "the bucket serves {} but spec.source published {} as version {published_version}",
        named(&seen),
        desired.revision
    );
    if first {
        d.drift_warning = Some(format!(
            "{what}: someone else deployed (kubectl celld deploy, or a CI job); {}",
            match input.spec.drift_policy {
                DriftPolicy::Correct => "publishing the source again (driftPolicy Correct)",
                DriftPolicy::Report => "leaving it (driftPolicy Report)",
            }
        ));
    }
    if input.spec.drift_policy == DriftPolicy::Report {
        d.synced = synced(
            Some(false),
            Reason::Drifted,
            format!(
                "{what}; driftPolicy is Report, so it stays: deploy the source again by setting the annotation platform.celld.dev/reconcile-requested-at"
            ),
        );
        return;
    }
    let window_start = drift.corrections_since.as_deref().and_then(parse);
    let window_over = window_over(drift.corrections_since.as_deref(), now);
    let running = d
        .status
        .last_attempted
        .as_ref()
        .is_some_and(|a| a.key == input.key && a.phase == PublishPhase::Running);
    if running {
        publish(input, desired, d, true);
        d.synced.reason = Reason::Drifted;
        return;
    }
    if window_over {
        drift.corrections = 0;
        drift.corrections_since = Some(stamp(now));
    }
    if drift.corrections >= MAX_CORRECTIONS {
        d.synced = Synced {
            stalled: true,
            ..synced(
                Some(false),
                Reason::ConcurrentWriter,
                format!(
                    "{what}, for the {} time in 10 minutes: another writer keeps deploying to this bucket prefix. Stop it (a CI job running celld deploy, kubectl celld deploy --force), or set spec.source.driftPolicy to Report; the operator tries again in 10 minutes",
                    ordinal(drift.corrections + 1)
                ),
            )
        };
        d.wake_at = window_start.and_then(|s| {
            s.checked_add(SignedDuration::try_from(CORRECTION_WINDOW).unwrap_or_default())
                .ok()
        });
        return;
    }
    drift.corrections += 1;
    let number = d
        .status
        .last_attempted
        .as_ref()
        .filter(|a| a.key == input.key)
        .map_or(1, |a| a.attempt + 1);
    let (next, start) = attempt(input, desired, number, 0);
    d.synced = Synced {
        progressing: true,
        ..synced(
            Some(false),
            Reason::Drifted,
            format!("{what}: publishing it again with Job {}", start.name),
        )
    };
    d.status.last_attempted = Some(next);
    d.start = Some(start);
}

/// Whether the correction window that started at `since` (none: not started) is over.
fn window_over(since: Option<&str>, now: Timestamp) -> bool {
    since.and_then(parse).is_none_or(|start| {
        start
            .checked_add(SignedDuration::try_from(CORRECTION_WINDOW).unwrap_or_default())
            .is_ok_and(|end| now >= end)
    })
}

fn ordinal(n: i32) -> String {
    match n {
        1 => "1st".into(),
        2 => "2nd".into(),
        3 => "3rd".into(),
        n => format!("{n}th"),
    }
}

#[cfg(test)]
mod tests;
