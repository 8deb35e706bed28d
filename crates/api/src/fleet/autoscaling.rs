//! How many nodes a fleet runs when the operator sizes it from celld's own capacity signals
//! (spec.autoscaling), following celld's rule: add a node when one reports activations waiting
//! for capacity or a pressured lease; remove one only when every remaining node has memory
//! headroom and nothing restores.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// Sizes the fleet from what its nodes report on `GET /state` (celld v0.5.0 and later). While it
/// is set the operator owns the number of nodes: spec.replicas is only where a fleet starts
/// (kept within minReplicas and maxReplicas), and a change to it, by hand (`kubectl scale`) or
/// by a HorizontalPodAutoscaler, is ignored and reported in the Autoscaling condition. Remove it
/// to size the fleet by spec.replicas again.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.minReplicas <= self.maxReplicas").message("spec.autoscaling.minReplicas must not exceed spec.autoscaling.maxReplicas"))]
pub struct Autoscaling {
    /// The fewest nodes: scale-in never goes below it. Default 1.
    #[serde(default = "default_min_replicas")]
    #[schemars(range(min = 1, max = 1000))]
    pub min_replicas: i32,

    /// The most nodes: scale-up never goes above it.
    #[schemars(range(min = 1, max = 1000))]
    pub max_replicas: i32,

    /// When nodes are added.
    #[serde(default)]
    pub scale_up: ScaleUp,

    /// When a node is removed.
    #[serde(default)]
    pub scale_down: ScaleDown,
}

/// When nodes are added: when a node reports activations waiting for capacity
/// (`capacity_waiting` > 0) or a pressured lease, for the whole stabilization window.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ScaleUp {
    /// Seconds the signal must hold, reading after reading, before nodes are added: a single
    /// burst does not add a node. 0 adds on the first reading that shows it. Default 30.
    #[serde(default = "default_up_window")]
    #[schemars(range(min = 0, max = 3600))]
    pub stabilization_window_seconds: i32,

    /// Nodes added by one step. Default 2.
    #[serde(default = "default_up_step")]
    #[schemars(range(min = 1, max = 100))]
    pub max_nodes_per_step: i32,

    /// Seconds between two steps up: the nodes added last take this long to start and take
    /// load before the signal is believed again. Default 60.
    #[serde(default = "default_up_period")]
    #[schemars(range(min = 0, max = 3600))]
    pub period_seconds: i32,
}

/// When a node is removed: one node at a time, the highest ordinal, only when for the whole
/// stabilization window every node was read, none restores cells or is pressured, every
/// survivor reports memory headroom, and the survivors' memory would hold the leaving node's
/// (their resident memory plus its, spread over them, within memoryUtilizationPercent of the
/// nodes' memory limit, or request when no limit is set); never during a rollout, a celld
/// upgrade, a Worker adoption or a publish of spec.source.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ScaleDown {
    /// Seconds the fleet must have had room, reading after reading, before a node is removed.
    /// Default 300.
    #[serde(default = "default_down_window")]
    #[schemars(range(min = 0, max = 86400))]
    pub stabilization_window_seconds: i32,

    /// Seconds between two removals (and after an addition): a removed node's cells move to the
    /// survivors, which are read again before the next. Default 300.
    #[serde(default = "default_down_period")]
    #[schemars(range(min = 0, max = 86400))]
    pub period_seconds: i32,

    /// The share of each node's memory limit (or request) the survivors may use once they hold
    /// a removed node's memory, in percent. A fleet without a memory limit or request in
    /// spec.resources is not scaled in: nothing says what the survivors can hold. Default 75.
    #[serde(default = "default_memory_utilization")]
    #[schemars(range(min = 10, max = 100))]
    pub memory_utilization_percent: i32,
}

impl Default for ScaleUp {
    fn default() -> Self {
        Self {
            stabilization_window_seconds: default_up_window(),
            max_nodes_per_step: default_up_step(),
            period_seconds: default_up_period(),
        }
    }
}

impl Default for ScaleDown {
    fn default() -> Self {
        Self {
            stabilization_window_seconds: default_down_window(),
            period_seconds: default_down_period(),
            memory_utilization_percent: default_memory_utilization(),
        }
    }
}

impl Autoscaling {
    /// Autoscaling between `min` and `max` nodes with the default behavior.
    pub fn between(min: i32, max: i32) -> Self {
        Self {
            min_replicas: min,
            max_replicas: max,
            scale_up: ScaleUp::default(),
            scale_down: ScaleDown::default(),
        }
    }

    /// `replicas` kept within minReplicas and maxReplicas.
    pub fn clamp(&self, replicas: i32) -> i32 {
        replicas.clamp(self.min_replicas, self.max_replicas.max(self.min_replicas))
    }
}

fn default_min_replicas() -> i32 {
    1
}

fn default_up_window() -> i32 {
    30
}

fn default_up_step() -> i32 {
    2
}

fn default_up_period() -> i32 {
    60
}

fn default_down_window() -> i32 {
    300
}

fn default_down_period() -> i32 {
    300
}

fn default_memory_utilization() -> i32 {
    75
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_documented_behavior() {
        let a: Autoscaling = serde_json::from_str(r#"{"maxReplicas": 5}"#).unwrap();
        assert_eq!(a, Autoscaling::between(1, 5));
        assert_eq!(a.scale_up.stabilization_window_seconds, 30);
        assert_eq!(a.scale_down.stabilization_window_seconds, 300);
        assert_eq!((a.clamp(0), a.clamp(3), a.clamp(9)), (1, 3, 5));
    }
}
