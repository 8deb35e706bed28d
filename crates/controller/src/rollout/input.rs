//! What a rollout's step reads: the rollout, its fleets and their selection, the revision its
//! source gives, the annotations holding it, and what the webhooks and the pointer writes
//! answered since the last step.

use crate::rollout::target::{NoTarget, TargetNow};
use celld_api::CelldFleet;
use celld_api::rollout::selection::Selection;
use celld_api::rollout::{CelldRollout, GateResult};
use k8s_openapi::jiff::Timestamp;
use std::collections::BTreeMap;

/// What a webhook gate answered for a wave.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The wave's number.
    pub wave: i32,
    /// Each webhook's answer.
    pub results: Vec<GateResult>,
}

/// What writing a fleet's pointer back did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointedBack {
    /// The pointer names the fleet's earlier version (written now, or already).
    Done(String),
    /// It cannot be (no earlier version, or another writer moved the pointer): left alone.
    Skipped(String),
    /// The write failed; it is tried again.
    Failed(String),
}

/// Everything a step reads.
pub struct Input<'a> {
    /// The rollout.
    pub rollout: &'a CelldRollout,
    /// The fleets it ships to, in order, and those it leaves alone.
    pub selection: &'a Selection,
    /// Every fleet of its namespace, by name.
    pub fleets: &'a BTreeMap<String, CelldFleet>,
    /// The revision spec.source gives now.
    pub target: &'a Result<TargetNow, NoTarget>,
    /// Why it is paused, if it is.
    pub paused: Option<&'a str>,
    /// The annotation promoting waves, as written.
    pub promotion: Option<&'a str>,
    /// Why it is aborted, if it is.
    pub aborted: Option<&'a str>,
    /// What the webhooks answered, when they were called for a wave being checked.
    pub checked: Option<&'a Checked>,
    /// What writing pointers back did, per fleet.
    pub pointed_back: &'a BTreeMap<String, PointedBack>,
    /// Now.
    pub now: Timestamp,
}
