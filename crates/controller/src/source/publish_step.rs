//! Publishing the wanted revision: a Job's end recorded in status.source, a new attempt, and
//! the step that starts, waits for or retries the wanted revision's Job.

use crate::source::job_state::JobSeen;
use crate::source::terms::{
    Bucket, Decision, HISTORY, Input, Start, Synced, backoff, parse, plural, publishing, stamp,
    synced,
};
use crate::source::wanted::{Revision, job_name};
use celld_api::reasons::Reason;
use celld_api::{PublishAttempt, PublishPhase, PublishedRevision, SourceStatus};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// Records what the Job of a running attempt ended with.
pub(super) fn record(status: &mut SourceStatus, job: &JobSeen, bucket: &Bucket, now: Timestamp) {
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
pub(super) fn attempt(
    input: &Input,
    desired: &Revision,
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

/// The wanted revision is not published: start, wait for or retry its Job.
pub(super) fn start_or_wait(input: &Input, desired: &Revision, d: &mut Decision, correcting: bool) {
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
            // Worded as the reconciles that wait for it word it: the next one writes nothing.
            d.synced = publishing(format!(
                "{what} {} with Job {} (attempt {})",
                desired.revision, start.name, attempt.attempt
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
