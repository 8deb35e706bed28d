//! What a fleet's nodes report about their capacity (status.capacity) and what the operator's
//! autoscaler decided from it (status.autoscaling).

use serde::{Deserialize, Serialize};

/// The capacity the fleet's nodes reported on `GET /state`, summed and per node. The operator
/// reads every node at a bounded rate (more often for a fleet with spec.autoscaling) and
/// exports every reading as Prometheus gauges; the status takes a reading only when it differs
/// from the one shown (a signal turned on or off, a count moved by more than a tenth), so a
/// quiet fleet does not rewrite its status.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CapacityStatus {
    /// When the numbers shown were read (RFC 3339).
    pub read_at: String,
    /// The sums over the nodes that answered.
    pub total: CapacityTotals,
    /// Each node, in ordinal order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeCapacity>,
    /// Fields of `/state` the nodes' celld release does not report (celld before v0.5.0 reports
    /// only restoring and rss): what depends on them is not decided (the autoscaler holds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreported: Vec<String>,
}

/// Capacity summed over a fleet's nodes.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CapacityTotals {
    /// Nodes whose state was read.
    pub nodes_read: i32,
    /// Nodes whose state could not be read.
    #[serde(default)]
    pub nodes_unreadable: i32,
    /// Cells the nodes own (dormant ones included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_cells: Option<u64>,
    /// Cells resident in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_cells: Option<u64>,
    /// Activations queued behind a node's residency cap: more than 0 means add a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_waiting: Option<u64>,
    /// Cold activations waiting for a permit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_waiting: Option<u64>,
    /// Cells being restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restoring: Option<u64>,
    /// Nodes whose lease says pressured.
    #[serde(default)]
    pub pressured_nodes: i32,
    /// Nodes that report no memory headroom.
    #[serde(default)]
    pub nodes_without_headroom: i32,
    /// Resident memory of the nodes, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
}

/// One node's capacity as its `GET /state` answered; a field its celld does not report is
/// absent.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeCapacity {
    /// The node's pod name.
    pub name: String,
    /// Cells it owns (dormant ones included); absent while a restarted node reads its ownership.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_cells: Option<u64>,
    /// Cells resident in its memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_cells: Option<u64>,
    /// Activations queued behind its residency cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_waiting: Option<u64>,
    /// Cold activations waiting for a permit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_waiting: Option<u64>,
    /// Cells it restores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restoring: Option<u64>,
    /// Whether its lease says pressured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressured: Option<bool>,
    /// Whether it reports memory headroom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_headroom: Option<bool>,
    /// Its resident memory, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
    /// Why its state could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What spec.autoscaling decided and why (absent without spec.autoscaling).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalingStatus {
    /// The nodes the autoscaler wants: the StatefulSet's replicas.
    pub desired_replicas: i32,
    /// The nodes that existed when it decided.
    pub current_replicas: i32,
    /// When it last changed the number of nodes (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scale_time: Option<String>,
    /// Since when the signal to add nodes has held, reading after reading (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_up_signal_since: Option<String>,
    /// Since when the fleet has had room to lose a node, reading after reading (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_signal_since: Option<String>,
    /// The last change of the number of nodes, with the signal and numbers behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_decision: Option<ScaleDecision>,
    /// Why the autoscaler does not change the number of nodes now, when something holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holding: Option<ScaleHold>,
}

/// One change of the number of nodes.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ScaleDecision {
    /// When (RFC 3339).
    pub time: String,
    /// Nodes before.
    pub from: i32,
    /// Nodes after.
    pub to: i32,
    /// The signal: CapacityWaiting, Pressured, Headroom, BelowMinimum or AboveMaximum.
    pub reason: String,
    /// The numbers behind it, in words.
    pub message: String,
}

/// Why the autoscaler holds.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ScaleHold {
    /// A word for it: Stabilizing, AtMaximum, AtMinimum, Restoring, RolloutInProgress,
    /// PublishInProgress, NoHeadroom, StateUnreadable, StateStale, SignalsUnsupported,
    /// NoMemoryBudget, Cooldown.
    pub reason: String,
    /// What holds it, in words.
    pub message: String,
}
