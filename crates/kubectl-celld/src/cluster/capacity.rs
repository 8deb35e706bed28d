//! A fleet's capacity as its nodes reported it (status.capacity) and what spec.autoscaling
//! decided from it (status.autoscaling), as `status` and `top` read them: which signals the
//! nodes' celld release reports at all (a signal it does not report is shown as `-`, never as
//! 0), the nodes the fleet should run, and the words for a node's flags. Pure.

use celld_api::{CapacityStatus, CelldFleet, NodeCapacity};

/// A signal of a node's `GET /state`, as status.capacity carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Cells owned, dormant ones included.
    OwnedCells,
    /// Cells resident in memory.
    ResidentCells,
    /// Activations queued behind the residency cap.
    CapacityWaiting,
    /// Cold activations waiting for a permit.
    ActivationWaiting,
    /// Cells being restored.
    Restoring,
    /// The lease says pressured.
    Pressured,
    /// The node reports memory headroom.
    MemoryHeadroom,
    /// Resident memory.
    RssBytes,
}

impl Signal {
    /// Spellings of the signal in status.capacity.unreported, lower case without separators:
    /// the status field's name and celld's own names for it.
    fn spellings(self) -> &'static [&'static str] {
        match self {
            Self::OwnedCells => &["ownedcells"],
            Self::ResidentCells => &["residentcells", "occupied", "residents"],
            Self::CapacityWaiting => &["capacitywaiting"],
            Self::ActivationWaiting => &["activationwaiting"],
            Self::Restoring => &["restoring"],
            Self::Pressured => &["pressured", "pressurednodes"],
            Self::MemoryHeadroom => &["memoryheadroom", "headroom", "nodeswithoutheadroom"],
            Self::RssBytes => &["rssbytes", "rss"],
        }
    }

    /// Whether `node` reports the signal.
    fn of(self, node: &NodeCapacity) -> bool {
        match self {
            Self::OwnedCells => node.owned_cells.is_some(),
            Self::ResidentCells => node.resident_cells.is_some(),
            Self::CapacityWaiting => node.capacity_waiting.is_some(),
            Self::ActivationWaiting => node.activation_waiting.is_some(),
            Self::Restoring => node.restoring.is_some(),
            Self::Pressured => node.pressured.is_some(),
            Self::MemoryHeadroom => node.memory_headroom.is_some(),
            Self::RssBytes => node.rss_bytes.is_some(),
        }
    }
}

/// `memory_headroom`, `memoryHeadroom` or `node_load.memory_headroom` as `memoryheadroom`.
fn normalized(field: &str) -> String {
    field
        .rsplit('.')
        .next()
        .unwrap_or(field)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether the nodes' celld reports `signal`: a node that reports it says yes; the fleet's
/// `unreported` list naming it, or every node that was read lacking it, says no. Without
/// per-node readings, the totals are believed.
pub fn reported(capacity: &CapacityStatus, signal: Signal) -> bool {
    if capacity.nodes.iter().any(|n| signal.of(n)) {
        return true;
    }
    let named = capacity
        .unreported
        .iter()
        .any(|u| signal.spellings().contains(&normalized(u).as_str()));
    !named && !capacity.nodes.iter().any(|n| n.error.is_none())
}

/// The nodes the fleet should run: what the autoscaler decided, else spec.replicas (kept
/// within spec.autoscaling's bounds, where the operator starts an autoscaled fleet).
pub fn desired_replicas(fleet: &CelldFleet) -> i32 {
    match &fleet.spec.autoscaling {
        Some(bounds) => fleet
            .status
            .as_ref()
            .and_then(|s| s.autoscaling.as_ref())
            .map_or_else(|| bounds.clamp(fleet.spec.replicas), |a| a.desired_replicas),
        None => fleet.spec.replicas,
    }
}

/// `yes`, `no` or `-` (not reported).
pub fn yes_no(flag: Option<bool>) -> &'static str {
    match flag {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

/// A count, or `-` when it is not reported.
pub fn count(n: Option<u64>) -> String {
    n.map_or_else(|| "-".to_string(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, headroom: Option<bool>, error: Option<&str>) -> NodeCapacity {
        NodeCapacity {
            name: name.into(),
            restoring: error.is_none().then_some(0),
            memory_headroom: headroom,
            error: error.map(Into::into),
            ..NodeCapacity::default()
        }
    }

    #[test]
    fn a_signal_is_reported_when_a_node_reports_it() {
        let capacity = CapacityStatus {
            nodes: vec![node("web-0", None, None), node("web-1", Some(true), None)],
            ..CapacityStatus::default()
        };
        assert!(reported(&capacity, Signal::MemoryHeadroom));
        assert!(reported(&capacity, Signal::Restoring));
        assert!(
            !reported(&capacity, Signal::Pressured),
            "no read node has it"
        );
    }

    #[test]
    fn unreported_names_signals_in_any_spelling() {
        for spelling in [
            "memoryHeadroom",
            "memory_headroom",
            "node_load.memory_headroom",
        ] {
            let capacity = CapacityStatus {
                unreported: vec![spelling.into()],
                ..CapacityStatus::default()
            };
            assert!(!reported(&capacity, Signal::MemoryHeadroom), "{spelling}");
            assert!(reported(&capacity, Signal::Pressured), "{spelling}");
        }
    }

    #[test]
    fn unreadable_nodes_say_nothing_about_what_is_reported() {
        let capacity = CapacityStatus {
            nodes: vec![node("web-0", None, Some("connection refused"))],
            ..CapacityStatus::default()
        };
        assert!(reported(&capacity, Signal::Pressured));
    }

    #[test]
    fn desired_is_the_autoscaler_s_else_the_spec_s_within_bounds() {
        let mut fleet = CelldFleet::new("web", celld_api::CelldFleetSpec::with_bucket("s3://b/w"));
        fleet.spec.replicas = 9;
        assert_eq!(desired_replicas(&fleet), 9);
        fleet.spec.autoscaling = Some(celld_api::Autoscaling::between(2, 5));
        assert_eq!(desired_replicas(&fleet), 5);
        fleet.status = Some(celld_api::CelldFleetStatus {
            autoscaling: Some(Box::new(celld_api::AutoscalingStatus {
                desired_replicas: 3,
                current_replicas: 2,
                ..Default::default()
            })),
            ..Default::default()
        });
        assert_eq!(desired_replicas(&fleet), 3);
    }
}
