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
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Resource;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;

/// How long a fence counts towards a fleet's NodesFencing.
pub const WINDOW: SignedDuration = SignedDuration::from_secs(600);

/// Fences within [`WINDOW`] that make a fleet's nodes fencing.
pub const REPEATED: usize = 2;

/// A node pod as far as fences go: its name, labels and the celld container's last exit. The
/// rest of the pod is not even parsed.
#[derive(Debug, Clone, Deserialize)]
pub struct NodePod {
    /// Its metadata.
    pub metadata: ObjectMeta,
    /// What the kubelet reports.
    #[serde(default)]
    pub status: Option<NodePodStatus>,
}

/// The part of a pod's status that says how its containers last ended.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePodStatus {
    /// Its containers.
    #[serde(default)]
    pub container_statuses: Vec<ContainerExit>,
}

/// A container's name and how it last ended.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerExit {
    /// The container.
    pub name: String,
    /// Its previous run, if it ran before.
    #[serde(default)]
    pub last_state: Option<LastState>,
}

/// A container's previous run.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LastState {
    /// How it ended, if it did.
    #[serde(default)]
    pub terminated: Option<Terminated>,
}

/// How a container's run ended.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Terminated {
    /// Its exit code.
    pub exit_code: i32,
    /// When it ended.
    #[serde(default)]
    pub finished_at: Option<Time>,
}

impl Resource for NodePod {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Pod".into()
    }

    fn group(_: &()) -> Cow<'_, str> {
        "".into()
    }

    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }

    fn plural(_: &()) -> Cow<'_, str> {
        "pods".into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl NodePod {
    /// When its celld container's last run ended, and with which exit code, if it ran before.
    fn exited(&self) -> Option<(Timestamp, i32)> {
        let status = self.status.as_ref()?;
        let celld = status
            .container_statuses
            .iter()
            .find(|c| c.name == "celld")?;
        let ended = celld.last_state.as_ref()?.terminated.as_ref()?;
        Some((ended.finished_at.as_ref()?.0, ended.exit_code))
    }
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
    pub fn record(&self, pod: &NodePod, now: Timestamp) -> Option<Recorded> {
        let (at, exit_code) = pod.exited()?;
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
