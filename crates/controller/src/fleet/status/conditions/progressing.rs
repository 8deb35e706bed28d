//! Progressing: a change of celld image under way, a rollout of the StatefulSet, or stable;
//! and a rollout that did not finish within spec.progressDeadlineSeconds, as Deployments report
//! it (Progressing=False, ProgressDeadlineExceeded), naming the nodes that hold it.

use super::{Cond, NodeCounts, cond};
use crate::upgrade::decide::Progress;
use celld_api::CelldFleetStatus;
use celld_api::conditions::{self, PROGRESSING};
use celld_api::reasons::Reason;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// A rollout's deadline, and what it is judged from.
#[derive(Debug, Clone, Copy)]
pub struct Deadline<'a> {
    /// spec.progressDeadlineSeconds.
    pub seconds: i64,
    /// The Progressing condition last written.
    pub previous: Option<&'a Condition>,
    /// The fleet's generation now.
    pub generation: Option<i64>,
    /// Now.
    pub now: Timestamp,
}

impl<'a> Deadline<'a> {
    /// The deadline of a rollout of `seconds`, judged from the Progressing condition of
    /// `status` (the one last written) for the fleet's `generation`, at `now`.
    pub fn new(
        seconds: i64,
        status: Option<&'a CelldFleetStatus>,
        generation: Option<i64>,
        now: Timestamp,
    ) -> Self {
        Self {
            seconds,
            previous: status.and_then(|s| conditions::find(&s.conditions, PROGRESSING)),
            generation,
            now,
        }
    }

    /// When the rollout `status` shows under way (Progressing=True) passes its deadline; None
    /// when none is under way.
    pub fn under_way(&self) -> Option<Timestamp> {
        self.previous
            .filter(|p| p.status == "True")
            .and_then(|_| self.at())
    }

    /// When the rollout under way passes its deadline: its start (the previous Progressing=True
    /// transition) plus the deadline. None when no rollout was under way, or when it already
    /// passed for this generation (the time is then in the past: [`Self::passed`] holds).
    pub fn at(&self) -> Option<Timestamp> {
        let previous = self.previous?;
        match previous.status.as_str() {
            "True" => previous
                .last_transition_time
                .0
                .checked_add(SignedDuration::from_secs(self.seconds))
                .ok(),
            _ if self.exceeded_before() => Some(previous.last_transition_time.0),
            _ => None,
        }
    }

    /// Whether a rollout under way now has passed its deadline.
    pub fn passed(&self) -> bool {
        self.at().is_some_and(|at| at <= self.now)
    }

    /// Whether the previous status already reported this generation's rollout past its
    /// deadline: it stays so until the rollout ends or the spec changes.
    fn exceeded_before(&self) -> bool {
        self.previous.is_some_and(|p| {
            p.status == "False"
                && p.reason == Reason::ProgressDeadlineExceeded.as_str()
                && p.observed_generation == self.generation
        })
    }
}

/// The Progressing condition: the upgrade's step while one is under way, otherwise whether the
/// `nodes` have reached their target; a step past the `deadline` is reported as exceeded,
/// naming the `holders`.
pub fn condition(
    upgrade: &Progress,
    nodes: &NodeCounts,
    deadline: &Deadline,
    holders: &[String],
) -> Cond {
    let progress = progress(upgrade, nodes);
    if progress.status != Some(true) || !deadline.passed() {
        return progress;
    }
    let held = if holders.is_empty() {
        String::new()
    } else {
        format!(", held by {}", holders.join(", "))
    };
    cond(
        PROGRESSING,
        Some(false),
        Reason::ProgressDeadlineExceeded,
        format!(
            "the rollout did not finish within {} s (spec.progressDeadlineSeconds){held}: {}",
            deadline.seconds, progress.message
        ),
    )
}

/// Progressing without a deadline.
fn progress(upgrade: &Progress, nodes: &NodeCounts) -> Cond {
    if let Some(upgrading) = upgrade_progress(upgrade) {
        return upgrading;
    }
    let NodeCounts {
        replicas,
        ready,
        updated,
        current,
        target,
        held: _,
    } = *nodes;
    if !current || updated < target || ready < target || replicas != target {
        cond(
            PROGRESSING,
            Some(true),
            Reason::RollingOut,
            format!("{ready}/{target} nodes ready, {updated} updated"),
        )
    } else {
        cond(
            PROGRESSING,
            Some(false),
            Reason::Stable,
            format!("{ready}/{target} nodes ready and up to date"),
        )
    }
}

/// The Progressing condition of a change of celld image under way.
fn upgrade_progress(progress: &Progress) -> Option<Cond> {
    let (reason, message) = match progress {
        Progress::Idle | Progress::Refused(_) => return None,
        Progress::Rolling {
            from,
            to,
            updated,
            of,
        } => (
            Reason::RollingUpgrade,
            format!("rolling from {from} to {to} one node at a time: {updated}/{of} nodes updated"),
        ),
        Progress::RollingTemplate { updated, of } => (
            Reason::RollingOut,
            format!(
                "rolling a change of the pod template one node at a time: {updated}/{of} nodes updated"
            ),
        ),
        Progress::WaitingForRestores { why } => (Reason::WaitingForRestores, why.clone()),
        Progress::WaitingForSettings { why } => (Reason::WaitingForSettings, why.clone()),
        Progress::FullStop {
            from,
            to,
            left,
            starts_at,
            why,
        } => (
            Reason::FullStop,
            match starts_at {
                _ if *left > 0 => {
                    format!("stopping every node of {from} before {to} starts ({left} left): {why}")
                }
                Some(at) => format!(
                    "every node of {from} stopped; {to} starts at {at}, once their leases expired: {why}"
                ),
                None => format!("every node of {from} stopped; starting {to}: {why}"),
            },
        ),
    };
    Some(cond(PROGRESSING, Some(true), reason, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: NodeCounts = NodeCounts {
        replicas: 3,
        ready: 1,
        updated: 3,
        current: true,
        target: 3,
        held: false,
    };

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    fn previous(status: bool, reason: Reason, since: i64, generation: i64) -> Condition {
        conditions::make(
            &[],
            PROGRESSING,
            Some(status),
            reason.as_str(),
            "m",
            Some(generation),
            at(since),
        )
    }

    fn judge(previous: Option<&Condition>, now: i64, generation: i64) -> Cond {
        let deadline = Deadline {
            seconds: 600,
            previous,
            generation: Some(generation),
            now: at(now),
        };
        condition(
            &Progress::Idle,
            &NODES,
            &deadline,
            &["web-1 (not ready)".into()],
        )
    }

    #[test]
    fn a_rollout_within_its_deadline_progresses() {
        let started = previous(true, Reason::RollingOut, 1_000, 2);
        let c = judge(Some(&started), 1_599, 2);
        assert_eq!((c.status, c.reason), (Some(true), Reason::RollingOut));
        // The first look at a rollout starts its clock.
        let c = judge(None, 1_000_000, 2);
        assert_eq!(c.status, Some(true));
    }

    #[test]
    fn a_rollout_past_its_deadline_is_stuck_and_names_its_holders() {
        let started = previous(true, Reason::RollingOut, 1_000, 2);
        let c = judge(Some(&started), 1_600, 2);
        assert_eq!(
            (c.status, c.reason),
            (Some(false), Reason::ProgressDeadlineExceeded)
        );
        assert_eq!(
            c.message,
            "the rollout did not finish within 600 s (spec.progressDeadlineSeconds), held by web-1 (not ready): 1/3 nodes ready, 3 updated"
        );
        // It stays stuck for the same generation, and a new spec starts a new clock.
        let stuck = previous(false, Reason::ProgressDeadlineExceeded, 1_600, 2);
        assert_eq!(
            judge(Some(&stuck), 1_601, 2).reason,
            Reason::ProgressDeadlineExceeded
        );
        assert_eq!(judge(Some(&stuck), 1_601, 3).reason, Reason::RollingOut);
    }

    #[test]
    fn a_finished_rollout_is_stable_whatever_the_deadline() {
        let started = previous(true, Reason::RollingOut, 0, 2);
        let done = NodeCounts { ready: 3, ..NODES };
        let deadline = Deadline {
            seconds: 600,
            previous: Some(&started),
            generation: Some(2),
            now: at(10_000),
        };
        let c = condition(&Progress::Idle, &done, &deadline, &[]);
        assert_eq!((c.status, c.reason), (Some(false), Reason::Stable));
        assert_eq!(deadline.at(), Some(at(600)));
        assert!(deadline.passed());
    }
}
