//! Nodes that restarted, and those that fenced themselves: a celld node that loses its lease's
//! compare-and-swap stops with exit code 3 (celld #239: an object store answering lease
//! renewals with 409 ConditionalRequestConflict makes nodes fence over and over). The kubelet
//! restarts it and keeps the exit in the container's `lastState`; a watch of the node pods
//! reads it there. Every exit of the last [`WINDOW`] is kept per fleet (its status shows each
//! node's last restart, which a rollout's bake judges); each fence is counted once
//! (`celld_operator_node_fences_total`) and makes the fleet's NodesFencing from [`REPEATED`] of
//! them.

use crate::locks::lock;
use celld_api::contract::lease::FENCE_EXIT_CODE;
use celld_api::labels;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use std::collections::HashMap;
use std::sync::Mutex;

/// How long a fence counts towards a fleet's NodesFencing.
pub const WINDOW: SignedDuration = SignedDuration::from_secs(600);

/// Fences within [`WINDOW`] that make a fleet's nodes fencing.
pub const REPEATED: usize = 2;

/// When the celld container of the node pod `pod` last ended, and with which exit code, if it
/// ran before.
fn exited(pod: &Pod) -> Option<(Timestamp, i32)> {
    let celld = pod
        .status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == "celld")?;
    let ended = celld.last_state.as_ref()?.terminated.as_ref()?;
    Some((ended.finished_at.as_ref()?.0, ended.exit_code))
}

/// One exit of a node's celld container (the kubelet restarted it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The node (its pod's name).
    pub node: String,
    /// When it exited.
    pub at: Timestamp,
    /// Its exit code.
    pub exit_code: i32,
}

impl Fence {
    /// Whether the node fenced itself (exit code 3).
    pub fn fenced(&self) -> bool {
        self.exit_code == FENCE_EXIT_CODE
    }
}

/// What recording a pod found: a new exit of a node of the fleet, and whether it is a fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The fleet.
    pub fleet: FleetKey,
    /// Whether the node fenced itself.
    pub fenced: bool,
}

/// The fleet a fence belongs to: its namespace and name.
pub type FleetKey = (String, String);

/// The fences of every fleet's nodes within [`WINDOW`]; see the [module](self).
#[derive(Default)]
pub struct FenceLog {
    fleets: Mutex<HashMap<FleetKey, Vec<Fence>>>,
}

impl FenceLog {
    /// Records what `pod` says at `now`: the fleet whose node exited, when its last exit is
    /// within [`WINDOW`] and not recorded yet.
    pub fn record(&self, pod: &Pod, now: Timestamp) -> Option<Recorded> {
        let (at, exit_code) = exited(pod)?;
        if now.duration_since(at) > WINDOW {
            return None;
        }
        let node = pod.metadata.name.clone()?;
        let fleet = pod.metadata.labels.as_ref()?.get(labels::FLEET)?.clone();
        let key = (pod.metadata.namespace.clone()?, fleet);
        let mut fleets = lock(&self.fleets);
        let fences = fleets.entry(key.clone()).or_default();
        if fences.iter().any(|f| f.node == node && f.at == at) {
            return None;
        }
        fences.push(Fence {
            node,
            at,
            exit_code,
        });
        Some(Recorded {
            fleet: key,
            fenced: exit_code == FENCE_EXIT_CODE,
        })
    }

    /// The exits of the nodes of the fleet `name` in `namespace` within [`WINDOW`] of `now`,
    /// oldest first.
    pub fn recent(&self, namespace: &str, name: &str, now: Timestamp) -> Vec<Fence> {
        let fleets = lock(&self.fleets);
        let key = (namespace.to_string(), name.to_string());
        let mut fences: Vec<Fence> = fleets
            .get(&key)
            .into_iter()
            .flatten()
            .filter(|f| now.duration_since(f.at) <= WINDOW)
            .cloned()
            .collect();
        fences.sort_by_key(|f| f.at);
        fences
    }

    /// Forgets every fence older than [`WINDOW`] at `now`.
    pub fn forget_old(&self, now: Timestamp) {
        crate::map_retain::retain(&mut lock(&self.fleets), |_, fences| {
            fences.retain(|f| now.duration_since(f.at) <= WINDOW);
            !fences.is_empty()
        });
    }
}

#[cfg(test)]
mod tests;
