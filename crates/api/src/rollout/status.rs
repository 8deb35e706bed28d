//! What a CelldRollout reports: the revision it ships, each wave and each fleet in it (from,
//! to, adopted N/M, phase, reason), the fleets it leaves alone, and kstatus conditions.

use super::source::RolloutSource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// Observed state of a CelldRollout.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CelldRolloutStatus {
    /// The metadata.generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// Where the rollout stands: Progressing, Paused, WaitingForPromotion, Succeeded, Halted (a
    /// gate failed, the fleets moved keep the new version), RolledBack (a gate failed and the
    /// fleets moved were pointed back) or Aborted.
    #[serde(default)]
    pub phase: RolloutPhase,

    /// The revision being shipped, fixed when it began: fleets publish exactly this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<RolloutTarget>,

    /// The current wave as N/M (for printing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave: Option<String>,

    /// The current wave's number, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_wave: Option<i32>,

    /// Fleets serving the new version out of the fleets the waves take, as N/M.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<String>,

    /// The highest wave promoted by hand (the annotation platform.celld.dev/promote-wave) for
    /// this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promoted_wave: Option<i32>,

    /// The value of the annotation platform.celld.dev/promote-wave last taken: a promotion
    /// taken for an earlier revision promotes nothing in the next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promotion_seen: Option<String>,

    /// Every wave of this revision, with its fleets in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waves: Vec<WaveStatus>,

    /// Fleets matching spec.selector that the rollout leaves alone, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFleet>,

    /// Ready (every wave passed), Reconciling (a wave is under way, or waits for a promotion or
    /// the end of a pause) and Stalled (halted, rolled back or aborted: a person decides what
    /// next), with reasons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

impl CelldRolloutStatus {
    /// Whether a fleet is being pointed back at its earlier version.
    pub fn rolling_back(&self) -> bool {
        self.waves
            .iter()
            .flat_map(|w| &w.fleets)
            .any(|f| f.phase == FleetPhase::RollingBack)
    }
}

/// Where a rollout stands.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum RolloutPhase {
    /// A wave is under way.
    #[default]
    Progressing,
    /// spec.paused or the annotation platform.celld.dev/rollout-paused holds it.
    Paused,
    /// The next wave waits for `kubectl celld rollout promote`.
    WaitingForPromotion,
    /// Every wave passed.
    Succeeded,
    /// A gate failed; the fleets moved keep the new version (spec.onFailure Halt).
    Halted,
    /// A gate failed; the fleets moved were pointed back at the version each had.
    RolledBack,
    /// Stopped by hand (the annotation platform.celld.dev/rollout-abort), rolled back unless
    /// spec.onFailure is Halt.
    Aborted,
}

impl RolloutPhase {
    /// The phase as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Progressing => "Progressing",
            Self::Paused => "Paused",
            Self::WaitingForPromotion => "WaitingForPromotion",
            Self::Succeeded => "Succeeded",
            Self::Halted => "Halted",
            Self::RolledBack => "RolledBack",
            Self::Aborted => "Aborted",
        }
    }

    /// Whether the rollout ended for its revision: only a new revision starts it again.
    pub fn ended(self) -> bool {
        matches!(
            self,
            Self::Succeeded | Self::Halted | Self::RolledBack | Self::Aborted
        )
    }
}

/// The revision a rollout ships.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RolloutTarget {
    /// spec.source when this revision began: what the fleets publish, whatever spec.source
    /// says since.
    pub source: RolloutSource,
    /// The revision: the image reference, or the Flux artifact's revision.
    pub revision: String,
    /// Its content digest, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// What identifies this revision of the rollout (revision, digest, path, deployer image and
    /// the annotation platform.celld.dev/reconcile-requested-at): a new key starts again from
    /// the first wave.
    pub key: String,
    /// When the operator began shipping it.
    pub started_at: Time,
}

/// One wave of the revision being shipped.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct WaveStatus {
    /// Its number, from 1.
    pub number: i32,
    /// Pending, Publishing (its fleets publish and adopt the revision), Baking, Checking (its
    /// webhooks are asked), Passed or Failed.
    #[serde(default)]
    pub phase: WavePhase,
    /// Its fleets, in order (fixed when the wave starts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fleets: Vec<RolloutFleet>,
    /// When it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When every fleet served the new version and the bake began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bake_started_at: Option<Time>,
    /// When the bake ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bake_until: Option<Time>,
    /// When it passed or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// What its webhooks answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<GateResult>,
    /// Why it failed, or what it waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where a wave stands.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum WavePhase {
    /// Not started.
    #[default]
    Pending,
    /// Its fleets publish the revision and their nodes adopt it.
    Publishing,
    /// Every fleet serves it; the bake runs.
    Baking,
    /// The bake ended; the webhooks are asked.
    Checking,
    /// Every gate passed.
    Passed,
    /// A gate failed.
    Failed,
}

impl WavePhase {
    /// The phase as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Publishing => "Publishing",
            Self::Baking => "Baking",
            Self::Checking => "Checking",
            Self::Passed => "Passed",
            Self::Failed => "Failed",
        }
    }
}

/// One fleet of a wave.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct RolloutFleet {
    /// The CelldFleet.
    pub name: String,
    /// Pending, Publishing (the revision is published to its bucket and its nodes adopt it),
    /// Adopted (every node serves it), Failed, RollingBack, RolledBack, or Left (deleted or no
    /// longer selected: not counted).
    #[serde(default)]
    pub phase: FleetPhase,
    /// The Worker version it served when its wave started (what a rollback points back at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The script of that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_script: Option<String>,
    /// The Worker version the revision became in its bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Nodes serving the new version out of its nodes, as N/M.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<String>,
    /// Why it failed or left, as a reason (VersionRefused, PublishFailed, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What a person reads about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When it started publishing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// The fleet's Degraded reason when it started, if it was Degraded: only a new reason
    /// fails the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded_before: Option<String>,
}

/// Where a fleet of a wave stands.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum FleetPhase {
    /// Its wave has not reached it (or the wave's parallelism bound holds it).
    #[default]
    Pending,
    /// The revision is published to its bucket and its nodes adopt it.
    Publishing,
    /// Every node serves the new version.
    Adopted,
    /// It failed a gate.
    Failed,
    /// Its pointer is being set back to the version it had.
    RollingBack,
    /// Its pointer names the version it had again (or a rollback was not possible: the
    /// message says why).
    RolledBack,
    /// Deleted, or no longer selected: not counted.
    Left,
}

impl FleetPhase {
    /// The phase as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Publishing => "Publishing",
            Self::Adopted => "Adopted",
            Self::Failed => "Failed",
            Self::RollingBack => "RollingBack",
            Self::RolledBack => "RolledBack",
            Self::Left => "Left",
        }
    }

    /// Whether a fleet in this phase publishes the rollout's revision (the rollout owns its
    /// pointer).
    pub fn follows(self) -> bool {
        matches!(self, Self::Publishing | Self::Adopted | Self::Failed)
    }
}

/// What a webhook answered at the end of a wave's bake.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GateResult {
    /// The webhook's name.
    pub name: String,
    /// Whether it passed the wave.
    pub passed: bool,
    /// Calls made.
    pub attempts: i32,
    /// What it answered, or what calling it met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When it answered last.
    pub at: Time,
}

/// A fleet matching the selector that the rollout leaves alone.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFleet {
    /// The CelldFleet.
    pub name: String,
    /// Why.
    pub reason: SkipReason,
    /// What a person reads.
    pub message: String,
}

/// Why a rollout leaves a selected fleet alone.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord,
)]
pub enum SkipReason {
    /// The fleet declares its own spec.source.
    OwnSource,
    /// The fleet carries the label platform.celld.dev/rollout-pin.
    Pinned,
    /// The fleet is a CelldPreview's.
    Preview,
    /// An older rollout ships to it.
    OtherRollout,
    /// No wave takes it.
    NoWave,
    /// The rollout already moves the most fleets one rollout may (1000).
    TooMany,
}

impl SkipReason {
    /// The reason as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OwnSource => "OwnSource",
            Self::Pinned => "Pinned",
            Self::Preview => "Preview",
            Self::OtherRollout => "OtherRollout",
            Self::NoWave => "NoWave",
            Self::TooMany => "TooMany",
        }
    }
}
