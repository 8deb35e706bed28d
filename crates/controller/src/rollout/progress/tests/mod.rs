//! The step's tests: a world of a rollout and its fleets ([`World`]) stepped through time, by
//! what they check: waves moving on, gates failing, a rollout held by hand.

use super::*;
use crate::rollout::input::Checked;
use crate::rollout::target::{NoTarget, TargetNow};
use celld_api::CelldFleet;
use celld_api::rollout::selection;
use celld_api::rollout::{CelldRollout, GateResult};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;
use std::collections::BTreeMap;

const REVISION: &str =
    "r.example.com/w:2@sha256:0000000000000000000000000000000000000000000000000000000000000002";

fn rollout(waves: serde_json::Value, extra: serde_json::Value) -> CelldRollout {
    let mut spec = json!({
        "source": {"image": {"reference": REVISION}},
        "selector": {},
        "waves": waves,
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldRollout",
        "metadata": {"name": "web", "namespace": "t", "uid": "u-web", "generation": 1},
        "spec": spec,
    }))
    .unwrap()
}

/// A fleet serving `version` (the rollout's when `published`), Ready and Adopted.
fn fleet(name: &str, version: &str, published: bool) -> CelldFleet {
    let source = published.then(|| {
        json!({
            "rollout": "web",
            "lastPublished": {"revision": REVISION, "version": version, "publishedAt": "t", "key": "k"},
        })
    });
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldFleet",
        "metadata": {"name": name, "namespace": "t"},
        "spec": {"objectStorage": {"bucket": format!("s3://b/{name}")}},
        "status": {
            "deployment": {"version": version, "scriptName": "w", "adopted": "2/2"},
            "source": source,
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "Adopted", "status": "True", "reason": "Adopted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            ],
        },
    }))
    .unwrap()
}

fn with_condition(mut f: CelldFleet, type_: &str, reason: &str) -> CelldFleet {
    let status = f.status.as_mut().unwrap();
    status.conditions.retain(|c| c.type_ != type_);
    status.conditions.push(
        serde_json::from_value(json!({
            "type": type_, "status": "True", "reason": reason, "message": "it broke",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }))
        .unwrap(),
    );
    f
}

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + s).unwrap()
}

fn target() -> Result<TargetNow, NoTarget> {
    Ok(TargetNow {
        revision: REVISION.into(),
        digest: None,
        key: "key-2".into(),
    })
}

/// A world: a rollout, its fleets, and what the annotations and outcomes say.
struct World {
    rollout: CelldRollout,
    fleets: BTreeMap<String, CelldFleet>,
    target: Result<TargetNow, NoTarget>,
    paused: Option<&'static str>,
    promotion: Option<&'static str>,
    aborted: Option<&'static str>,
    checked: Option<Checked>,
    pointed_back: BTreeMap<String, PointedBack>,
}

impl World {
    fn new(rollout: CelldRollout, fleets: &[&str]) -> Self {
        Self {
            rollout,
            fleets: fleets
                .iter()
                .map(|n| ((*n).to_string(), fleet(n, "0000000000000001", false)))
                .collect(),
            target: target(),
            paused: None,
            promotion: None,
            aborted: None,
            checked: None,
            pointed_back: BTreeMap::new(),
        }
    }

    /// `name` published the revision as `version` and every node serves it.
    fn serve(&mut self, name: &str) {
        self.fleets
            .insert(name.into(), fleet(name, "0000000000000002", true));
    }

    fn step(&self, previous: Option<&CelldRolloutStatus>, now: Timestamp) -> CelldRolloutStatus {
        let fleets: Vec<&CelldFleet> = self.fleets.values().collect();
        let selection = selection::select(&self.rollout, fleets, &[&self.rollout]);
        step(
            &Input {
                rollout: &self.rollout,
                selection: &selection,
                fleets: &self.fleets,
                target: &self.target,
                paused: self.paused,
                promotion: self.promotion,
                aborted: self.aborted,
                checked: self.checked.as_ref(),
                pointed_back: &self.pointed_back,
                now,
            },
            previous,
        )
    }
}

/// A wave's number, phase and fleets with theirs.
type WaveSeen = (i32, WavePhase, Vec<(String, FleetPhase)>);

fn phases(s: &CelldRolloutStatus) -> Vec<WaveSeen> {
    s.waves
        .iter()
        .map(|w| {
            (
                w.number,
                w.phase,
                w.fleets.iter().map(|f| (f.name.clone(), f.phase)).collect(),
            )
        })
        .collect()
}

fn fleet_phase(s: &CelldRolloutStatus, name: &str) -> FleetPhase {
    s.waves
        .iter()
        .flat_map(|w| &w.fleets)
        .find(|f| f.name == name)
        .map(|f| f.phase)
        .unwrap_or(FleetPhase::Pending)
}

fn condition(s: &CelldRolloutStatus, type_: &str) -> Option<String> {
    s.conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| format!("{} {}", c.status, c.reason))
}

mod gates;
mod held;
mod waves;
