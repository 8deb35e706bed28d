//! The publishing of a fleet's spec.source as one pure step: from the revision wanted, the
//! state of the last deploy Job, the bucket's pointer and the fleet's last status.source, the
//! next status.source, the Job to start (if any), the Jobs to keep, when to look again and the
//! SourceSynced condition.
//!
//! Everything that must survive a restart is in status.source, and every step can be taken
//! again from a stale copy of it: a Job's name is derived from the publish key and the attempt
//! number (creating it twice adopts the first), a result is recorded from the Job (kept until
//! the status that records it is in the cache), and failures are counted per key.

use crate::source::drift::drift;
use crate::source::publish_step::{record, start_or_wait};
use crate::source::terms::{Decision, Input, Synced, synced};
use crate::source::wanted::Wanted;
use celld_api::SourceRevision;
use celld_api::reasons::Reason;

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
        start_or_wait(input, desired, d, false);
    }
}

#[cfg(test)]
mod tests;
