//! A rollout's next status, from its last one and what the caches say now: which revision it
//! ships (a new one supersedes the one under way), which fleets each wave takes, where each
//! fleet stands ([`wave_fleets`](crate::rollout::wave_fleets)), when a wave starts, bakes, is checked, passes or fails, and
//! which fleets a failure points back. Pure: the reconcile reads the inputs, calls the webhooks
//! and writes the pointers back, and hands what they answered to the next step.

use crate::rollout::input::{Input, PointedBack};
use crate::rollout::phase;
use crate::rollout::target::TargetNow;
use crate::rollout::wave_fleets::{duration, stamp, watch_fleets};
use celld_api::rollout::reasons::RolloutReason;
use celld_api::rollout::{
    Approval, CelldRolloutStatus, FailurePolicy, FleetPhase, RolloutFleet, RolloutPhase,
    RolloutTarget, SkipReason, SkippedFleet, WavePhase, WaveStatus, waves,
};
use k8s_openapi::jiff::{RoundMode, SignedDuration, Timestamp, TimestampRound, Unit};
use std::collections::HashSet;
use std::time::Duration;

/// The next status of the rollout `input` describes, from `previous`.
pub fn step(input: &Input, previous: Option<&CelldRolloutStatus>) -> CelldRolloutStatus {
    let mut s = previous.cloned().unwrap_or_default();
    let spec = &input.rollout.spec;
    s.observed_generation = input.rollout.metadata.generation;
    match input.target {
        Ok(now) => {
            let changed = s.target.as_ref().map(|t| &t.key) != Some(&now.key);
            // A new revision waits for the fleets being pointed back.
            if changed && !s.rolling_back() {
                begin(&mut s, input, now);
            }
        }
        Err(_) if s.target.is_none() => {
            s.phase = RolloutPhase::Progressing;
            s.skipped = skipped(input, &[]);
            phase::finish(&mut s, input);
            return s;
        }
        Err(_) => {}
    }
    if let Some(value) = input.promotion
        && s.promotion_seen.as_deref() != Some(value)
    {
        s.promotion_seen = Some(value.to_string());
        s.promoted_wave = promoted(value).or(s.promoted_wave);
    }
    let planned = plan(input, &s);
    s.skipped = skipped(input, &planned.left);
    if let Some(why) = input.aborted
        && !s.phase.ended()
    {
        fail(
            &mut s,
            spec.on_failure,
            None,
            RolloutReason::Aborted,
            format!("aborted by hand (annotation platform.celld.dev/rollout-abort): {why}"),
            input.now,
        );
        s.phase = RolloutPhase::Aborted;
    }
    point_back(&mut s, input);
    if !s.phase.ended() {
        advance(&mut s, input, &planned);
    }
    phase::finish(&mut s, input);
    s
}

/// The wave an annotation value promotes: its leading number.
fn promoted(value: &str) -> Option<i32> {
    value.split_whitespace().next()?.parse().ok()
}

/// Starts shipping `now` from the first wave.
fn begin(s: &mut CelldRolloutStatus, input: &Input, now: &TargetNow) {
    s.target = Some(RolloutTarget {
        source: input.rollout.spec.source.clone(),
        revision: now.revision.clone(),
        digest: now.digest.clone(),
        key: now.key.clone(),
        started_at: stamp(input.now),
    });
    s.waves = (1..=input.rollout.spec.waves.len())
        .map(|n| WaveStatus {
            number: i32::try_from(n).unwrap_or(i32::MAX),
            ..WaveStatus::default()
        })
        .collect();
    s.promoted_wave = None;
    s.promotion_seen = input.promotion.map(str::to_string);
    s.phase = RolloutPhase::Progressing;
}

/// The fleets each wave not started yet takes, and those no wave takes.
struct Planned {
    /// Per wave: its fleets, when it has not started.
    waves: Vec<Vec<String>>,
    /// Selected fleets no wave takes.
    left: Vec<String>,
}

/// The fleets of the waves not started yet: the plan over the fleets selected now, without
/// those a started wave took; a fleet the plan puts in a wave that started without it (it was
/// created or selected since) goes to the first wave not started.
fn plan(input: &Input, s: &CelldRolloutStatus) -> Planned {
    let (mut planned, left) = waves::plan(&input.rollout.spec.waves, input.selection);
    let taken: HashSet<&str> = s
        .waves
        .iter()
        .flat_map(|w| &w.fleets)
        .map(|f| f.name.as_str())
        .collect();
    let mut orphans = Vec::new();
    for (i, members) in planned.iter_mut().enumerate() {
        let started = s
            .waves
            .get(i)
            .is_some_and(|w| w.phase != WavePhase::Pending);
        members.retain(|f| !taken.contains(f.as_str()));
        if started {
            orphans.append(members);
        } else if !orphans.is_empty() {
            let mut with_orphans = std::mem::take(&mut orphans);
            with_orphans.append(members);
            *members = with_orphans;
        }
    }
    let mut left = left;
    left.extend(orphans);
    Planned {
        waves: planned,
        left,
    }
}

/// The selection's skipped fleets and those no wave takes.
fn skipped(input: &Input, left: &[String]) -> Vec<SkippedFleet> {
    let mut skipped = input.selection.skipped.clone();
    skipped.extend(left.iter().map(|name| SkippedFleet {
        name: name.clone(),
        reason: SkipReason::NoWave,
        message: "no wave takes this fleet: add a last wave without fleets or selector (or with fleets: '100%')".to_string(),
    }));
    skipped
}

/// Halts the rollout for `reason` (failing wave `wave`, if a wave failed): with
/// [`FailurePolicy::Rollback`] every fleet it moved is to be pointed back.
fn fail(
    s: &mut CelldRolloutStatus,
    policy: FailurePolicy,
    wave: Option<usize>,
    reason: RolloutReason,
    message: String,
    now: Timestamp,
) {
    if let Some(w) = wave.and_then(|i| s.waves.get_mut(i)) {
        w.phase = WavePhase::Failed;
        w.finished_at = Some(stamp(now));
        w.message = Some(format!("{reason}: {message}"));
    }
    if policy == FailurePolicy::Rollback {
        for fleet in s.waves.iter_mut().flat_map(|w| w.fleets.iter_mut()) {
            if fleet.phase.follows() {
                fleet.phase = FleetPhase::RollingBack;
            }
        }
    }
    s.phase = RolloutPhase::Halted;
}

/// Records what writing the pointers back did.
fn point_back(s: &mut CelldRolloutStatus, input: &Input) {
    for fleet in s.waves.iter_mut().flat_map(|w| w.fleets.iter_mut()) {
        if fleet.phase != FleetPhase::RollingBack {
            continue;
        }
        let (phase, reason, message) = match input.pointed_back.get(&fleet.name) {
            Some(PointedBack::Done(m)) => (FleetPhase::RolledBack, RolloutReason::PointedBack, m),
            Some(PointedBack::Skipped(m)) => {
                (FleetPhase::RolledBack, RolloutReason::RollbackSkipped, m)
            }
            Some(PointedBack::Failed(m)) => {
                (FleetPhase::RollingBack, RolloutReason::RollbackFailed, m)
            }
            None => continue,
        };
        fleet.phase = phase;
        fleet.reason = Some(reason.as_str().to_string());
        fleet.message = Some(message.clone());
    }
}

/// Moves the waves on as far as they go now.
fn advance(s: &mut CelldRolloutStatus, input: &Input, planned: &Planned) {
    let spec = &input.rollout.spec;
    for i in 0..s.waves.len() {
        let Some(wave) = spec.waves.get(i) else {
            break;
        };
        let number = s.waves[i].number;
        let promoted = s.promoted_wave.is_some_and(|p| p >= number);
        if s.waves[i].phase == WavePhase::Pending {
            if input.paused.is_some() {
                s.phase = RolloutPhase::Paused;
                return;
            }
            if wave.approval == Approval::Manual && !promoted {
                s.phase = RolloutPhase::WaitingForPromotion;
                return;
            }
            let w = &mut s.waves[i];
            w.phase = WavePhase::Publishing;
            w.started_at = Some(stamp(input.now));
            w.fleets = planned.waves[i]
                .iter()
                .map(|name| RolloutFleet {
                    name: name.clone(),
                    ..RolloutFleet::default()
                })
                .collect();
        }
        if let Some((reason, message)) = watch_fleets(s, i, input) {
            fail(s, spec.on_failure, Some(i), reason, message, input.now);
            return;
        }
        let w = &mut s.waves[i];
        if w.phase == WavePhase::Publishing {
            let all_serve = w
                .fleets
                .iter()
                .all(|f| matches!(f.phase, FleetPhase::Adopted | FleetPhase::Left));
            if !all_serve {
                s.phase = paused_or_progressing(input);
                return;
            }
            let counted = w.fleets.iter().any(|f| f.phase == FleetPhase::Adopted);
            let bake = if counted {
                duration(&wave.bake, Duration::from_secs(300))
            } else {
                Duration::ZERO
            };
            w.phase = WavePhase::Baking;
            w.bake_started_at = Some(stamp(input.now));
            let until = input
                .now
                .saturating_add(SignedDuration::try_from(bake).unwrap_or(SignedDuration::MAX))
                .unwrap_or(input.now);
            // Written to the whole second: rounded up, so a bake never ends early.
            let whole = TimestampRound::new()
                .smallest(Unit::Second)
                .mode(RoundMode::Ceil);
            w.bake_until = Some(stamp(until.round(whole).unwrap_or(until)));
        }
        if w.phase == WavePhase::Baking {
            let baked = promoted
                || w.bake_until
                    .as_ref()
                    .is_none_or(|until| input.now >= until.0);
            if !baked || input.paused.is_some() {
                s.phase = paused_or_progressing(input);
                return;
            }
            w.phase = if spec.gates.webhooks.is_empty() {
                WavePhase::Passed
            } else {
                WavePhase::Checking
            };
        }
        if w.phase == WavePhase::Checking {
            if let Some(checked) = input.checked.filter(|c| c.wave == number) {
                for result in &checked.results {
                    w.gates.retain(|g| g.name != result.name);
                    w.gates.push(result.clone());
                }
                let order = |name: &str| spec.gates.webhooks.iter().position(|g| g.name == name);
                w.gates.sort_by_key(|g| order(&g.name));
            }
            let rejected = spec.gates.webhooks.iter().find_map(|gate| {
                w.gates
                    .iter()
                    .find(|g| g.name == gate.name)
                    .filter(|g| !g.passed && g.attempts > gate.retries.max(0))
            });
            if let Some(rejected) = rejected {
                let message = format!(
                    "webhook {} did not pass the wave after {} calls: {}",
                    rejected.name,
                    rejected.attempts,
                    rejected.message.as_deref().unwrap_or("no answer")
                );
                fail(
                    s,
                    spec.on_failure,
                    Some(i),
                    RolloutReason::WebhookRejected,
                    message,
                    input.now,
                );
                return;
            }
            let passed = spec
                .gates
                .webhooks
                .iter()
                .all(|gate| w.gates.iter().any(|g| g.name == gate.name && g.passed));
            if !passed {
                s.phase = RolloutPhase::Progressing;
                return;
            }
            w.phase = WavePhase::Passed;
        }
        if w.phase == WavePhase::Passed && w.finished_at.is_none() {
            w.finished_at = Some(stamp(input.now));
        }
    }
    s.phase = if s.waves.iter().all(|w| w.phase == WavePhase::Passed) {
        RolloutPhase::Succeeded
    } else {
        RolloutPhase::Progressing
    };
}

fn paused_or_progressing(input: &Input) -> RolloutPhase {
    if input.paused.is_some() {
        RolloutPhase::Paused
    } else {
        RolloutPhase::Progressing
    }
}

#[cfg(test)]
mod tests;
