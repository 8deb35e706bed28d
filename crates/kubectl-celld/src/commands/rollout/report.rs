//! What `rollout status` shows of one rollout, and its `-o yaml|json` form: its phase, the
//! revision it ships, each wave (as spec.waves asks for it and as the operator reports it)
//! with its fleets, the fleets it leaves alone, why it is paused or stalled, and the promotion
//! and abort asked for. Pure: the rollout is the argument.

use crate::cluster::rollouts;
use celld_api::CelldRollout;
use celld_api::labels::{PROMOTE_WAVE, ROLLOUT_ABORT, ROLLOUT_PAUSED};
use celld_api::rollout::{Approval, GateResult, RolloutFleet, WavePhase, WaveStatus};
use celld_api::rollout::{RolloutPhase, SkippedFleet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;

/// One rollout, as `rollout status` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutReport {
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Its phase; absent until the operator reports one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<RolloutPhase>,
    /// Whether the operator's status describes the rollout's latest spec (its
    /// observedGeneration is the rollout's generation).
    pub up_to_date: bool,
    /// Whether the rollout ended for its revision (Succeeded, Halted, RolledBack or Aborted),
    /// as reported for its latest spec: only a new revision starts it again.
    pub ended: bool,
    /// What spec.source names: `image REFERENCE` or `KIND/NAME` of a Flux source.
    pub source: String,
    /// The revision being shipped, once the operator fixed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Whether spec.source names another source than the revision being shipped began with:
    /// the operator starts again from the first wave with it.
    pub new_source: bool,
    /// When the operator began shipping the revision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// The current wave's number, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_wave: Option<i32>,
    /// Fleets on the new version out of the fleets the waves take, as N/M.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved: Option<String>,
    /// What holds it paused, when something does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<Paused>,
    /// The highest wave promoted for this revision, as the operator reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promoted_wave: Option<i32>,
    /// The annotation platform.celld.dev/promote-wave (the wave, then the time), when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promote_requested: Option<String>,
    /// The annotation platform.celld.dev/rollout-abort (its reason), when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_requested: Option<String>,
    /// Every wave, in order.
    pub waves: Vec<WaveReport>,
    /// Fleets the selector matches that the rollout leaves alone, and why.
    pub skipped: Vec<SkippedFleet>,
    /// The Stalled condition as `REASON: message`, when it is True.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled: Option<String>,
    /// The conditions: Ready, Reconciling, Stalled.
    pub conditions: Vec<Condition>,
}

/// What holds a rollout paused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Paused {
    /// spec.paused is true (in git).
    pub spec: bool,
    /// The annotation platform.celld.dev/rollout-paused, its value the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotation: Option<String>,
}

/// One wave: as spec.waves asks for it, and as the operator reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaveReport {
    /// Its number, from 1.
    pub number: i32,
    /// Pending, Publishing, Baking, Checking, Passed or Failed.
    pub phase: WavePhase,
    /// Which fleets it takes: a count (`1`), a percentage (`10%`), `selector` or `rest`.
    pub takes: String,
    /// How long its fleets bake.
    pub bake: String,
    /// Whether it starts by itself or waits for a promotion.
    pub approval: Approval,
    /// When it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When its bake ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bake_until: Option<Time>,
    /// When it passed or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// Why it failed, or what it waits for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Its fleets, in order.
    pub fleets: Vec<RolloutFleet>,
    /// What its webhooks answered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<GateResult>,
}

impl WaveReport {
    /// Its fleets serving the new version out of those counted (the ones that left are not),
    /// as N/M.
    pub fn adopted(&self) -> String {
        let counted = self
            .fleets
            .iter()
            .filter(|f| f.phase != celld_api::rollout::FleetPhase::Left);
        let (done, all) = counted.fold((0, 0), |(done, all), f| {
            let adopted = f.phase == celld_api::rollout::FleetPhase::Adopted;
            (done + usize::from(adopted), all + 1)
        });
        format!("{done}/{all}")
    }
}

/// How far a wave of spec.waves goes, in a word.
fn takes(wave: &celld_api::rollout::Wave) -> String {
    match (&wave.fleets, &wave.selector) {
        (_, Some(_)) => "selector".to_string(),
        (Some(IntOrString::Int(n)), None) => n.to_string(),
        (Some(IntOrString::String(s)), None) => s.clone(),
        (None, None) => "rest".to_string(),
    }
}

/// The wave numbered `number`: spec.waves' entry and the operator's status of it.
fn wave(
    number: i32,
    spec: Option<&celld_api::rollout::Wave>,
    status: Option<&WaveStatus>,
) -> WaveReport {
    let status = status.cloned().unwrap_or_default();
    WaveReport {
        number,
        phase: status.phase,
        takes: spec.map_or_else(|| "-".to_string(), takes),
        bake: spec.map_or_else(|| "-".to_string(), |w| w.bake.clone()),
        approval: spec.map_or(Approval::Automatic, |w| w.approval),
        started_at: status.started_at,
        bake_until: status.bake_until,
        finished_at: status.finished_at,
        message: status.message,
        fleets: status.fleets,
        gates: status.gates,
    }
}

/// The report of `rollout`.
pub fn build(rollout: &CelldRollout) -> RolloutReport {
    let status = rollout.status.clone();
    let reported = status.is_some();
    let status = status.unwrap_or_default();
    let observed = status.observed_generation;
    let up_to_date = reported
        && rollout
            .metadata
            .generation
            .is_none_or(|g| observed.is_some_and(|o| o >= g));
    let phase = reported.then_some(status.phase);
    let annotation = rollouts::annotation(rollout, ROLLOUT_PAUSED).map(str::to_string);
    let paused = (rollout.spec.paused || annotation.is_some()).then_some(Paused {
        spec: rollout.spec.paused,
        annotation,
    });
    let count = rollout.spec.waves.len().max(status.waves.len());
    let waves = (1..=count)
        .map(|n| {
            let number = i32::try_from(n).unwrap_or(i32::MAX);
            wave(
                number,
                rollout.spec.waves.get(n - 1),
                status.waves.iter().find(|w| w.number == number),
            )
        })
        .collect();
    let stalled = celld_api::conditions::find(&status.conditions, celld_api::conditions::STALLED)
        .filter(|c| c.status == "True")
        .map(|c| format!("{}: {}", c.reason, c.message));
    RolloutReport {
        name: rollout.metadata.name.clone().unwrap_or_default(),
        namespace: rollout.metadata.namespace.clone().unwrap_or_default(),
        phase,
        up_to_date,
        ended: up_to_date && status.phase.ended(),
        source: rollouts::source_name(&rollout.spec.source),
        revision: status.target.as_ref().map(|t| t.revision.clone()),
        new_source: status
            .target
            .as_ref()
            .is_some_and(|t| t.source != rollout.spec.source),
        started_at: status.target.as_ref().map(|t| t.started_at.clone()),
        current_wave: status.current_wave,
        moved: status.moved,
        paused,
        promoted_wave: status.promoted_wave,
        promote_requested: rollouts::annotation(rollout, PROMOTE_WAVE).map(str::to_string),
        abort_requested: rollouts::annotation(rollout, ROLLOUT_ABORT).map(str::to_string),
        waves,
        skipped: status.skipped,
        stalled,
        conditions: status.conditions,
    }
}
