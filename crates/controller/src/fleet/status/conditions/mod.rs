//! One builder per condition of a fleet's status, each from what the reconcile observed:
//! [`storage`] (StorageResolved and Deployed), [`adopted`], [`route`] (RouteReady),
//! [`source_synced`], [`progressing`], [`degraded`] and [`ready`], then [`kstatus`] (Reconciling and Stalled) from
//! those; [`settings_held`] (SettingsHeld), [`nodes_fencing`] (NodesFencing), [`durability`]
//! (DurabilityAtRisk) and [`autoscaling`] (Autoscaling and IdleEviction)
//! stand apart. [`compute`](crate::fleet::status::compute) runs them in that order.

pub mod adopted;
pub mod autoscaling;
pub mod degraded;
pub mod durability;
pub mod kstatus;
pub mod nodes_fencing;
pub mod progressing;
pub mod ready;
pub mod route;
pub mod settings_held;
pub mod source_synced;
pub mod storage;

use celld_api::reasons::Reason;

/// A condition before its transition time is decided.
pub struct Cond {
    /// Its type.
    pub type_: &'static str,
    /// True, False, or Unknown (None).
    pub status: Option<bool>,
    /// Why.
    pub reason: Reason,
    /// What a person reads.
    pub message: String,
}

/// A condition of `type_`.
pub fn cond(
    type_: &'static str,
    status: Option<bool>,
    reason: Reason,
    message: impl Into<String>,
) -> Cond {
    Cond {
        type_,
        status,
        reason,
        message: message.into(),
    }
}

/// What the fleet's StatefulSet says about its nodes.
#[derive(Debug, Clone, Copy)]
pub struct NodeCounts {
    /// Nodes that exist.
    pub replicas: i32,
    /// Nodes ready.
    pub ready: i32,
    /// Nodes on the current spec.
    pub updated: i32,
    /// Whether the StatefulSet controller has seen the current spec.
    pub current: bool,
    /// The nodes the fleet should run: none while no Worker is deployed.
    pub target: i32,
    /// Whether the fleet is held at 0 nodes because no Worker is deployed.
    pub held: bool,
}
