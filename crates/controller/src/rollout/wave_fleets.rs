//! The fleets of one wave, step by step: each judged by its own status
//! ([`fleet_gate`]), a deleted or unselected one left, and the
//! waiting ones started as the wave's parallelism bound allows. Pure.

use crate::rollout::fleet_gate::{self, Judged, Seen};
use crate::rollout::input::Input;
use celld_api::fleet::parse_duration;
use celld_api::rollout::reasons::RolloutReason;
use celld_api::rollout::{CelldRolloutStatus, FleetPhase, RolloutFleet, WavePhase};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use std::collections::HashSet;
use std::time::Duration;

/// `now` as the API writes a time.
pub fn stamp(now: Timestamp) -> Time {
    Time(now)
}

/// `text` as a duration, `default` when it is not one admission takes.
pub fn duration(text: &str, default: Duration) -> Duration {
    parse_duration(text).unwrap_or(default)
}

/// Updates the fleets of wave `i` from their status and starts the ones its parallelism bound
/// lets start; the first failure found, if any.
pub fn watch_fleets(
    s: &mut CelldRolloutStatus,
    i: usize,
    input: &Input,
) -> Option<(RolloutReason, String)> {
    let spec = &input.rollout.spec;
    let rollout = input.rollout.metadata.name.as_deref().unwrap_or_default();
    let target = s.target.clone()?;
    let deadline = duration(&spec.gates.progress_deadline, Duration::from_secs(900));
    let selected: HashSet<&str> = input.selection.fleets.iter().map(String::as_str).collect();
    let wave = &spec.waves[i];
    let w = &mut s.waves[i];
    let mut failure = None;
    for entry in &mut w.fleets {
        if !matches!(
            entry.phase,
            FleetPhase::Publishing | FleetPhase::Adopted | FleetPhase::Failed
        ) {
            continue;
        }
        let Some(fleet) = input.fleets.get(&entry.name) else {
            leave(entry, RolloutReason::FleetDeleted, "the fleet was deleted");
            continue;
        };
        if !selected.contains(entry.name.as_str()) {
            leave(
                entry,
                RolloutReason::Unselected,
                "the fleet is no longer selected (its labels, its own spec.source or the pin label changed); it keeps the version it serves",
            );
            continue;
        }
        let judged = Judged {
            rollout,
            target: &target,
            degraded_before: entry.degraded_before.as_deref(),
            started_at: entry.started_at.as_ref().map(|t| t.0),
            deadline,
            now: input.now,
        };
        let was_adopted = entry.phase == FleetPhase::Adopted;
        match fleet_gate::judge(fleet, &judged) {
            Seen::Publishing {
                to,
                adopted,
                waiting,
            } => {
                entry.to = to.or(entry.to.take());
                entry.adopted = adopted;
                if was_adopted && w.phase == WavePhase::Baking {
                    entry.phase = FleetPhase::Failed;
                    entry.reason = Some(RolloutReason::NotServing.as_str().into());
                    entry.message = Some(format!("during the bake: {waiting}"));
                } else {
                    entry.phase = FleetPhase::Publishing;
                    entry.reason = None;
                    entry.message = Some(waiting);
                }
            }
            Seen::Adopted { to, adopted } => {
                entry.phase = FleetPhase::Adopted;
                entry.to = Some(to);
                entry.adopted = adopted;
                entry.reason = None;
                entry.message = None;
            }
            Seen::Failed {
                reason,
                message,
                to,
            } => {
                entry.phase = FleetPhase::Failed;
                entry.to = to.or(entry.to.take());
                entry.reason = Some(reason.as_str().into());
                entry.message = Some(message);
            }
        }
        if entry.phase == FleetPhase::Failed && failure.is_none() {
            failure = Some((
                reason_of(entry),
                format!(
                    "CelldFleet {}: {}",
                    entry.name,
                    entry.message.as_deref().unwrap_or_default()
                ),
            ));
        }
    }
    if failure.is_some() || input.paused.is_some() || w.phase != WavePhase::Publishing {
        return failure;
    }
    let bound = wave
        .max_parallel
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(usize::MAX);
    let mut publishing = w
        .fleets
        .iter()
        .filter(|f| f.phase == FleetPhase::Publishing)
        .count();
    for entry in &mut w.fleets {
        if publishing >= bound {
            break;
        }
        if entry.phase != FleetPhase::Pending {
            continue;
        }
        match input.fleets.get(&entry.name) {
            Some(fleet) if selected.contains(entry.name.as_str()) => {
                let deployment = fleet.status.as_ref().and_then(|s| s.deployment.as_ref());
                entry.phase = FleetPhase::Publishing;
                entry.from = deployment.map(|d| d.version.clone());
                entry.from_script = deployment.and_then(|d| d.script_name.clone());
                entry.degraded_before = fleet_gate::degraded_reason(fleet);
                entry.started_at = Some(stamp(input.now));
                entry.message = Some("publishing the revision".into());
                publishing += 1;
            }
            Some(_) => leave(
                entry,
                RolloutReason::Unselected,
                "the fleet is no longer selected; it keeps the version it serves",
            ),
            None => leave(entry, RolloutReason::FleetDeleted, "the fleet was deleted"),
        }
    }
    None
}

fn reason_of(entry: &RolloutFleet) -> RolloutReason {
    use RolloutReason as R;
    let all = [
        R::PublishFailed,
        R::VersionRefused,
        R::NewDegradedReason,
        R::NodeRestarted,
        R::NotServing,
        R::ProgressDeadlineExceeded,
    ];
    all.into_iter()
        .find(|r| entry.reason.as_deref() == Some(r.as_str()))
        .unwrap_or(R::WaveFailed)
}

fn leave(entry: &mut RolloutFleet, reason: RolloutReason, message: &str) {
    entry.phase = FleetPhase::Left;
    entry.reason = Some(reason.as_str().into());
    entry.message = Some(message.into());
}
