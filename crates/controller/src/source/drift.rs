//! A published revision checked against the bucket's pointer: drift seen, reported, corrected
//! by publishing again, or stalled when another writer keeps deploying.

use crate::source::publish_step::{attempt, start_or_wait};
use crate::source::terms::{
    Bucket, CORRECTION_WINDOW, Decision, Input, MAX_CORRECTIONS, Synced, parse, stamp, synced,
};
use crate::source::wanted::Revision;
use celld_api::reasons::Reason;
use celld_api::{DriftPolicy, PublishPhase, SourceDrift};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// The wanted revision is published: compare the bucket's pointer with what was published.
pub(super) fn drift(input: &Input, desired: &Revision, d: &mut Decision) {
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
        start_or_wait(input, desired, d, true);
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
