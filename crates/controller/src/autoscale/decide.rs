//! spec.autoscaling's decision: how many nodes the fleet runs, from what its nodes last
//! reported ([`Tracked`]: the reading, since when each signal has held), what it is busy with,
//! and what the autoscaler decided before (status.autoscaling, so a restart of the operator
//! keeps the count and the last scale time). Pure.
//!
//! - Up: a node reports activations waiting for capacity or a pressured lease, through the
//!   whole scale-up stabilization window and a period after the last step up: up to
//!   maxNodesPerStep nodes, never above maxReplicas; held only by a change of celld image.
//! - Down: the reading says a node could go (every node read, none restores, every survivor
//!   has headroom and memory for the leaving node's), through the whole scale-down window and a
//!   period after the last change: one node, never below minReplicas, never while the fleet is
//!   busy, never on a stale reading (fail closed).

use crate::autoscale::busy::Busy;
use crate::capacity::store::Tracked;
use celld_api::reasons::Reason;
use celld_api::{Autoscaling, AutoscalingStatus, ScaleDecision, ScaleHold};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// What the decision is made from.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// spec.autoscaling.
    pub policy: &'a Autoscaling,
    /// status.autoscaling as last written.
    pub previous: Option<&'a AutoscalingStatus>,
    /// spec.replicas: where a fleet that runs no node starts when autoscaling is turned on.
    pub spec_replicas: i32,
    /// Nodes that exist (the StatefulSet's status.replicas).
    pub current: i32,
    /// What the nodes last reported, if they were read.
    pub tracked: Option<&'a Tracked>,
    /// Whether that reading is too old to act on.
    pub stale: bool,
    /// What the fleet is busy with.
    pub busy: Option<&'a Busy>,
    /// Who else set spec.replicas (through the scale subresource), when it differs from what
    /// the autoscaler wants.
    pub contested: Option<&'a str>,
    /// Now.
    pub now: Timestamp,
}

/// The Autoscaling condition, before its transition time is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleVerdict {
    /// True, False or Unknown (None).
    pub status: Option<bool>,
    /// Why.
    pub reason: Reason,
    /// What a person reads.
    pub message: String,
}

/// What the autoscaler decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaled {
    /// The nodes the fleet runs.
    pub desired: i32,
    /// status.autoscaling.
    pub status: AutoscalingStatus,
    /// A change of the node count made now (an Event and a metric), if any.
    pub decision: Option<ScaleDecision>,
    /// The Autoscaling condition.
    pub verdict: ScaleVerdict,
    /// When the decision may change with no new reading (a window or period ends).
    pub wake_at: Option<Timestamp>,
    /// Whether scaling is paused (the fleet is busy or a node restores): the exported gauge.
    pub paused: bool,
}

/// Decides.
pub fn decide(f: &Facts<'_>) -> Scaled {
    let policy = f.policy;
    // Turned on: from the nodes running, or spec.replicas for a fleet that runs none yet.
    let start = if f.current > 0 {
        f.current
    } else {
        f.spec_replicas
    };
    let base = f.previous.map_or(start, |p| p.desired_replicas);
    let mut s = Step {
        f,
        base,
        desired: base,
        decision: None,
        holding: None,
        wake_at: None,
    };
    if base != policy.clamp(base) {
        let (reason, why) = if base < policy.min_replicas {
            (
                Reason::BelowMinimum,
                format!("spec.autoscaling.minReplicas is {}", policy.min_replicas),
            )
        } else {
            (
                Reason::AboveMaximum,
                format!("spec.autoscaling.maxReplicas is {}", policy.max_replicas),
            )
        };
        s.scale(policy.clamp(base), reason, why);
    } else {
        s.follow_signals();
    }
    s.finish()
}

/// A decision being made.
struct Step<'a, 'f> {
    f: &'a Facts<'f>,
    base: i32,
    desired: i32,
    decision: Option<ScaleDecision>,
    holding: Option<(Reason, String)>,
    wake_at: Option<Timestamp>,
}

impl Step<'_, '_> {
    fn scale(&mut self, to: i32, reason: Reason, why: String) {
        self.desired = to;
        self.decision = Some(ScaleDecision {
            time: self.f.now.to_string(),
            from: self.base,
            to,
            reason: reason.as_str().to_string(),
            message: format!("from {} to {to} nodes: {why}", self.base),
        });
    }

    fn hold(&mut self, reason: Reason, message: impl Into<String>) {
        self.holding = Some((reason, message.into()));
    }

    /// Scales at `due` or later: now when it passed, else holds as stabilizing until then.
    fn at(&mut self, due: Timestamp, to: i32, reason: Reason, why: String, waiting: &str) {
        if self.f.now >= due {
            self.scale(to, reason, why);
        } else {
            self.wake_at = Some(due);
            self.hold(
                Reason::Stabilizing,
                format!("{waiting}; {to} nodes at {due} unless it changes ({why})"),
            );
        }
    }

    fn follow_signals(&mut self) {
        let f = self.f;
        let Some(tracked) = f.tracked else {
            self.hold(
                Reason::StateUnreadable,
                "the nodes' capacity has not been read yet",
            );
            return;
        };
        if f.stale {
            self.hold(
                Reason::StateStale,
                format!(
                    "the last reading of the nodes' capacity, at {}, is too old to act on",
                    tracked.reading.read_at
                ),
            );
            return;
        }
        let Some(signals) = tracked.signals.as_ref() else {
            self.hold(
                Reason::StateUnreadable,
                "the nodes' capacity has not been read yet",
            );
            return;
        };
        let policy = f.policy;
        if let Some((reason, why)) = &signals.up {
            if self.base >= policy.max_replicas {
                self.hold(
                    Reason::AtMaximum,
                    format!(
                        "{why}, but the fleet runs spec.autoscaling.maxReplicas ({})",
                        policy.max_replicas
                    ),
                );
                return;
            }
            if let Some(busy) = f.busy.filter(|b| b.holds_up) {
                self.hold(busy.reason, busy.message.clone());
                return;
            }
            let since = tracked.up_since.unwrap_or(f.now);
            let window = since + secs(policy.scale_up.stabilization_window_seconds);
            let period = self
                .last_change(true)
                .map(|t| t + secs(policy.scale_up.period_seconds));
            let due = period.map_or(window, |p| p.max(window));
            let to = (self.base + policy.scale_up.max_nodes_per_step).min(policy.max_replicas);
            let waiting = format!("nodes have asked for more since {since}");
            self.at(due, to, *reason, why.clone(), &waiting);
            return;
        }
        match &signals.down {
            Err(hold) => {
                if self.base > policy.min_replicas || hold.reason != Reason::AtMinimum {
                    self.hold(hold.reason, hold.message.clone());
                }
            }
            Ok(_) if self.base <= policy.min_replicas => {}
            Ok(why) => {
                if let Some(busy) = f.busy {
                    self.hold(busy.reason, busy.message.clone());
                    return;
                }
                if f.current != self.base {
                    self.hold(
                        Reason::RolloutInProgress,
                        format!("{} of {} nodes exist", f.current, self.base),
                    );
                    return;
                }
                let since = tracked.down_since.unwrap_or(f.now);
                let window = since + secs(policy.scale_down.stabilization_window_seconds);
                let period = self
                    .last_change(false)
                    .map(|t| t + secs(policy.scale_down.period_seconds));
                let due = period.map_or(window, |p| p.max(window));
                let waiting = format!("the fleet has had room for one node less since {since}");
                self.at(due, self.base - 1, Reason::Headroom, why.clone(), &waiting);
            }
        }
    }

    /// When the node count last changed: a step up only for `up` (the period between steps up),
    /// any change otherwise (a removal waits a period after an addition too).
    fn last_change(&self, up: bool) -> Option<Timestamp> {
        let last = self.f.previous?.last_decision.as_ref()?;
        if up && last.to < last.from {
            return None;
        }
        last.time.parse().ok()
    }

    fn finish(self) -> Scaled {
        let f = self.f;
        let previous = f.previous;
        let restoring = f
            .tracked
            .and_then(|t| t.signals.as_ref())
            .is_some_and(|s| matches!(&s.down, Err(h) if h.reason == Reason::Restoring));
        let status = AutoscalingStatus {
            desired_replicas: self.desired,
            current_replicas: f.current,
            last_scale_time: match &self.decision {
                Some(d) => Some(d.time.clone()),
                None => previous.and_then(|p| p.last_scale_time.clone()),
            },
            scale_up_signal_since: f.tracked.and_then(|t| t.up_since).map(|t| t.to_string()),
            scale_down_signal_since: f.tracked.and_then(|t| t.down_since).map(|t| t.to_string()),
            last_decision: self
                .decision
                .clone()
                .or_else(|| previous.and_then(|p| p.last_decision.clone())),
            holding: self.holding.as_ref().map(|(reason, message)| ScaleHold {
                reason: reason.as_str().to_string(),
                message: message.clone(),
            }),
        };
        let verdict = verdict(f, &status, self.holding.as_ref());
        Scaled {
            desired: self.desired,
            status,
            decision: self.decision,
            verdict,
            wake_at: self.wake_at,
            paused: f.busy.is_some() || restoring,
        }
    }
}

/// The Autoscaling condition: False while the autoscaler cannot read its signals or another
/// writer contests spec.replicas, True otherwise.
fn verdict(
    f: &Facts<'_>,
    status: &AutoscalingStatus,
    holding: Option<&(Reason, String)>,
) -> ScaleVerdict {
    let v = |status, reason, message: String| ScaleVerdict {
        status,
        reason,
        message,
    };
    if let Some(manager) = f.contested {
        return v(
            Some(false),
            Reason::ReplicasContested,
            format!(
                "spec.replicas is {}, set through the scale subresource by {manager}; spec.autoscaling owns the number of nodes ({}) and ignores it: remove the HorizontalPodAutoscaler or ScaledObject that targets this fleet, or spec.autoscaling",
                f.spec_replicas, status.desired_replicas
            ),
        );
    }
    match holding {
        Some((reason @ (Reason::StateUnreadable | Reason::StateStale), message)) => {
            let status = if f.tracked.is_none() {
                None
            } else {
                Some(false)
            };
            return v(status, *reason, message.clone());
        }
        Some((Reason::SignalsUnsupported, message)) => {
            return v(Some(false), Reason::SignalsUnsupported, message.clone());
        }
        _ => {}
    }
    let bounds = format!(
        "{} nodes wanted, {} running (from {} to {})",
        status.desired_replicas, f.current, f.policy.min_replicas, f.policy.max_replicas
    );
    let reason = if status.desired_replicas == f.current {
        Reason::Steady
    } else {
        Reason::Scaling
    };
    let message = match holding {
        Some((_, why)) => format!("{bounds}; holding: {why}"),
        None => bounds,
    };
    v(Some(true), reason, message)
}

fn secs(seconds: i32) -> SignedDuration {
    SignedDuration::from_secs(i64::from(seconds))
}

#[cfg(test)]
mod tests;
