//! Progressing: a change of celld image under way, a rollout of the StatefulSet, or stable.

use super::{Cond, Nodes, cond};
use crate::reason::Reason;
use crate::upgrade::decide::Progress;
use celld_api::conditions::PROGRESSING;

/// The Progressing condition: the upgrade's step while one is under way, otherwise whether the
/// `nodes` have reached their target.
pub fn condition(upgrade: &Progress, nodes: &Nodes) -> Cond {
    if let Some(upgrading) = upgrade_progress(upgrade) {
        return upgrading;
    }
    let Nodes {
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
        Progress::WaitingForRestores { why } => (Reason::WaitingForRestores, why.clone()),
        Progress::FullStop {
            from,
            to,
            left,
            why,
        } => (
            Reason::FullStop,
            if *left > 0 {
                format!("stopping every node of {from} before {to} starts ({left} left): {why}")
            } else {
                format!("every node of {from} stopped; starting {to}: {why}")
            },
        ),
    };
    Some(cond(PROGRESSING, Some(true), reason, message))
}
