//! Fleets whose nodes reported their capacity, shared by the tests of `status` and `top`: an
//! autoscaled celld v0.6 fleet with activations waiting, a pressured node and an unreadable
//! one; a celld v0.4 fleet that reports only restores, resident cells and memory; and fleets
//! without status.capacity.

use crate::status_render::at;
use celld_api::conditions::{AUTOSCALING, IDLE_EVICTION, READY};
use celld_api::{
    Autoscaling, AutoscalingStatus, CapacityStatus, CapacityTotals, CelldFleet, CelldFleetSpec,
    CelldFleetStatus, NodeCapacity, ScaleDecision, ScaleHold,
};

pub const GIB: u64 = 1024 * 1024 * 1024;
pub const MIB: u64 = 1024 * 1024;

/// An RFC 3339 time `secs_ago` before [`now`].
pub fn time(secs_ago: i64) -> String {
    at(secs_ago).unwrap().0.to_string()
}

/// Fleet `name` in `ns` with `replicas` nodes, all ready, and no capacity read yet.
pub fn fleet(ns: &str, name: &str, replicas: i32) -> CelldFleet {
    let mut spec = CelldFleetSpec::with_bucket(format!("s3://celld/{name}"));
    spec.replicas = replicas;
    let mut f = CelldFleet::new(name, spec);
    f.metadata.namespace = Some(ns.into());
    f.metadata.creation_timestamp = at(86_400);
    f.status = Some(CelldFleetStatus {
        replicas,
        ready_replicas: replicas,
        updated_replicas: replicas,
        ..CelldFleetStatus::default()
    });
    f
}

/// A node of celld v0.6 that answered.
#[allow(clippy::too_many_arguments)]
pub fn node(
    name: &str,
    owned: u64,
    resident: u64,
    waiting: u64,
    activation: u64,
    restoring: u64,
    pressured: bool,
    headroom: bool,
    rss: u64,
) -> NodeCapacity {
    NodeCapacity {
        name: name.into(),
        owned_cells: Some(owned),
        resident_cells: Some(resident),
        capacity_waiting: Some(waiting),
        activation_waiting: Some(activation),
        restoring: Some(restoring),
        pressured: Some(pressured),
        memory_headroom: Some(headroom),
        rss_bytes: Some(rss),
        error: None,
    }
}

/// The sums of the nodes that answered, as the operator writes them.
pub fn totals(nodes: &[NodeCapacity]) -> CapacityTotals {
    let read: Vec<&NodeCapacity> = nodes.iter().filter(|n| n.error.is_none()).collect();
    let sum = |f: fn(&NodeCapacity) -> Option<u64>| -> Option<u64> {
        read.iter().map(|n| f(n)).sum::<Option<u64>>()
    };
    CapacityTotals {
        nodes_read: read.len() as i32,
        nodes_unreadable: (nodes.len() - read.len()) as i32,
        owned_cells: sum(|n| n.owned_cells),
        resident_cells: sum(|n| n.resident_cells),
        capacity_waiting: sum(|n| n.capacity_waiting),
        activation_waiting: sum(|n| n.activation_waiting),
        restoring: sum(|n| n.restoring),
        pressured_nodes: read.iter().filter(|n| n.pressured == Some(true)).count() as i32,
        nodes_without_headroom: read
            .iter()
            .filter(|n| n.memory_headroom == Some(false))
            .count() as i32,
        rss_bytes: sum(|n| n.rss_bytes),
    }
}

/// `fleet` with `nodes` read `secs_ago`.
pub fn with_capacity(mut fleet: CelldFleet, nodes: Vec<NodeCapacity>, secs_ago: i64) -> CelldFleet {
    let status = fleet.status.get_or_insert_with(CelldFleetStatus::default);
    status.capacity = Some(CapacityStatus {
        read_at: time(secs_ago),
        total: totals(&nodes),
        nodes,
        unreported: vec![],
    });
    fleet
}

fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: Some(1),
        last_transition_time: at(600).unwrap(),
    }
}

/// `apps/web`: celld v0.6, autoscaled between 2 and 6 nodes. web-0 has 3 activations waiting
/// for capacity and a pressured lease, web-1 has room, web-2 could not be read; the
/// autoscaler added a node 10 minutes ago and holds in its cooldown.
pub fn web() -> CelldFleet {
    let mut f = fleet("apps", "web", 2);
    f.spec.autoscaling = Some(Autoscaling::between(2, 6));
    let unreadable = NodeCapacity {
        name: "web-2".into(),
        error: Some("GET http://web-2.web-peers.apps.svc:8081/state: connection refused".into()),
        ..NodeCapacity::default()
    };
    let mut f = with_capacity(
        f,
        vec![
            node("web-0", 1200, 40, 3, 1, 0, true, false, 3 * GIB / 2),
            node("web-1", 800, 35, 0, 0, 2, false, true, 1100 * MIB),
            unreadable,
        ],
        45,
    );
    let status = f.status.as_mut().unwrap();
    status.replicas = 3;
    status.ready_replicas = 2;
    status.updated_replicas = 3;
    status.autoscaling = Some(Box::new(AutoscalingStatus {
        desired_replicas: 4,
        current_replicas: 3,
        last_scale_time: Some(time(600)),
        scale_up_signal_since: Some(time(40)),
        scale_down_signal_since: None,
        last_decision: Some(ScaleDecision {
            time: time(600),
            from: 2,
            to: 3,
            reason: "CapacityWaiting".into(),
            message: "web-0 reported 5 activations waiting for capacity for 30s".into(),
        }),
        holding: Some(ScaleHold {
            reason: "Cooldown".into(),
            message: "the node added 10m ago gets 60s (scaleUp.periodSeconds) to take load".into(),
        }),
    }));
    status.conditions = vec![
        condition(READY, "True", "Serving", "2/3 nodes ready"),
        condition(
            AUTOSCALING,
            "False",
            "StateUnreadable",
            "node web-2's state cannot be read: connection refused",
        ),
        condition(
            IDLE_EVICTION,
            "False",
            "IdleEvictionUnset",
            "spec.env does not set CELLD_IDLE_EVICT_S: nodes added take only cells that hibernate on their own",
        ),
    ];
    f
}

/// `apps/legacy`: celld v0.4, 2 nodes that report only restores, resident cells and memory.
pub fn legacy() -> CelldFleet {
    let v04 = |name: &str, resident: u64, restoring: u64, rss: u64| NodeCapacity {
        name: name.into(),
        resident_cells: Some(resident),
        restoring: Some(restoring),
        rss_bytes: Some(rss),
        ..NodeCapacity::default()
    };
    let mut f = with_capacity(
        fleet("apps", "legacy", 2),
        vec![
            v04("legacy-0", 12, 1, 300 * MIB),
            v04("legacy-1", 9, 0, 250 * MIB),
        ],
        130,
    );
    f.status
        .as_mut()
        .unwrap()
        .capacity
        .as_mut()
        .unwrap()
        .unreported = vec![
        "ownedCells".into(),
        "capacityWaiting".into(),
        "activationWaiting".into(),
        "pressured".into(),
        "memoryHeadroom".into(),
    ];
    f
}

/// `apps/new`: 1 node, never read.
pub fn unread() -> CelldFleet {
    fleet("apps", "new", 1)
}
