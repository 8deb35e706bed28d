//! What a rollout's status says at the end of a step: its phase once the fleets pointed back
//! are all done, the current wave and the fleets moved (for printing), and the kstatus
//! conditions: Ready (every wave passed), Reconciling (a wave under way or waiting), Stalled
//! (halted, rolled back, aborted, or a source only a person can fix). Pure.

use crate::rollout::input::Input;
use celld_api::conditions::{self, READY, RECONCILING, STALLED};
use celld_api::rollout::reasons::RolloutReason;
use celld_api::rollout::{
    CelldRolloutStatus, FailurePolicy, FleetPhase, RolloutPhase, SkipReason, WavePhase,
};

/// Finishes `s`, the status a step made for `input`.
pub fn finish(s: &mut CelldRolloutStatus, input: &Input) {
    let fleets = || s.waves.iter().flat_map(|w| &w.fleets);
    let rolling_back = s.rolling_back();
    if s.phase == RolloutPhase::Halted
        && input.rollout.spec.on_failure == FailurePolicy::Rollback
        && !rolling_back
    {
        s.phase = RolloutPhase::RolledBack;
    }
    let total = s.waves.len();
    let current = s
        .waves
        .iter()
        .position(|w| w.phase != WavePhase::Passed)
        .map_or(total, |i| i + 1);
    s.current_wave = (total > 0).then(|| i32::try_from(current).unwrap_or(i32::MAX));
    s.wave = (total > 0).then(|| format!("{current}/{total}"));
    let no_wave = s
        .skipped
        .iter()
        .filter(|k| k.reason == SkipReason::NoWave)
        .count();
    let planned = input.selection.fleets.len().saturating_sub(no_wave);
    let serving = fleets().filter(|f| f.phase == FleetPhase::Adopted).count();
    s.moved = s.target.as_ref().map(|_| format!("{serving}/{planned}"));
    s.conditions = conditions_of(s, input);
}

/// The reason and message of the phase.
fn said(s: &CelldRolloutStatus, input: &Input) -> (RolloutReason, String) {
    let failed = s
        .waves
        .iter()
        .find(|w| w.phase == WavePhase::Failed)
        .map(|w| {
            format!(
                "wave {} failed: {}",
                w.number,
                w.message.as_deref().unwrap_or_default()
            )
        })
        .unwrap_or_default();
    let revision = s
        .target
        .as_ref()
        .map_or_else(String::new, |t| t.revision.clone());
    match s.phase {
        RolloutPhase::Progressing => match (&s.target, input.target) {
            (None, Err(why)) => (RolloutReason::SourceNotReady, why.message.clone()),
            _ => {
                let wave = s.waves.iter().find(|w| w.phase != WavePhase::Passed);
                let what = wave.map_or_else(String::new, |w| {
                    format!(
                        "wave {} of {} {}",
                        w.number,
                        s.waves.len(),
                        w.phase.as_str().to_lowercase()
                    )
                });
                (
                    RolloutReason::WaveStarted,
                    format!("shipping {revision}: {what}"),
                )
            }
        },
        RolloutPhase::Paused => (
            RolloutReason::Paused,
            format!(
                "paused ({}): no fleet starts and no wave passes until it is resumed",
                input.paused.unwrap_or("spec.paused")
            ),
        ),
        RolloutPhase::WaitingForPromotion => (
            RolloutReason::WaitingForPromotion,
            format!(
                "wave {} waits for a promotion: kubectl celld rollout promote {}",
                s.current_wave.unwrap_or_default(),
                input.rollout.metadata.name.as_deref().unwrap_or_default()
            ),
        ),
        RolloutPhase::Succeeded => (
            RolloutReason::Succeeded,
            format!("every wave passed: the fleets serve {revision}"),
        ),
        RolloutPhase::Halted => (
            RolloutReason::Halted,
            if s.rolling_back() {
                format!("{failed}; pointing the fleets moved back at their versions")
            } else {
                format!(
                    "{failed}; no further wave starts and the fleets moved keep the new version (spec.onFailure Halt): fix the cause and ship a new revision"
                )
            },
        ),
        RolloutPhase::RolledBack => (
            RolloutReason::RolledBack,
            format!(
                "{failed}; the fleets moved were pointed back at the versions they had: fix the cause and ship a new revision"
            ),
        ),
        RolloutPhase::Aborted => (
            RolloutReason::Aborted,
            format!(
                "aborted ({}): ship a new revision (or change the annotation platform.celld.dev/reconcile-requested-at) to start again",
                input.aborted.unwrap_or("by hand")
            ),
        ),
    }
}

fn conditions_of(
    s: &CelldRolloutStatus,
    input: &Input,
) -> Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
    let previous = &s.conditions;
    let generation = input.rollout.metadata.generation;
    let (reason, message) = said(s, input);
    let stalled_source = s.target.is_none() && input.target.as_ref().is_err_and(|e| e.stalled);
    let stalled = matches!(
        s.phase,
        RolloutPhase::Halted | RolloutPhase::RolledBack | RolloutPhase::Aborted
    ) || stalled_source;
    let reconciling = !stalled && s.phase != RolloutPhase::Succeeded;
    let make = |type_, status| {
        conditions::make(
            previous,
            type_,
            Some(status),
            reason.as_str(),
            message.clone(),
            generation,
            input.now,
        )
    };
    let mut list = vec![make(READY, s.phase == RolloutPhase::Succeeded)];
    if reconciling {
        list.push(make(RECONCILING, true));
    }
    if stalled {
        list.push(make(STALLED, true));
    }
    list
}
