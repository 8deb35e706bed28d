//! The fixed parameters of a run, shown in the report's method section.

use std::time::Duration;

/// Client tasks that create the fleets (operator runs) or apply the children (the floor).
pub const CONCURRENCY: usize = 32;

/// The bench's own process, by name in the report's CPU figures.
pub const BENCH: &str = "bench";

/// The operator's process, by name in the report's CPU figures.
pub const OPERATOR: &str = "operator";

/// Nodes of each fleet (`spec.replicas`).
pub const REPLICAS: i32 = 2;

/// One fleet in this many declares its Worker (spec.source): the operator publishes it with a
/// deploy Job, which the bench ends as published.
pub const SOURCED_EVERY: usize = 50;

/// The window after settling in which idle requests, writes and CPU time are counted: one
/// operator resync period at its default (60 s), so every fleet is reconciled once in it.
pub const IDLE_WINDOW: Duration = Duration::from_secs(60);

/// The operator has settled once it has written nothing for this long after every fleet
/// reported Ready.
pub const QUIET: Duration = Duration::from_secs(10);

/// The shortest wait for the operator's writes to stop after every fleet is Ready; see
/// [`settle_limit`].
pub const SETTLE_LIMIT: Duration = Duration::from_secs(120);

/// The wait for the operator's writes to stop grows by this much per fleet beyond
/// [`SETTLE_LIMIT`]'s worth (its queue of resyncs is longer).
pub const SETTLE_PER_FLEET: Duration = Duration::from_millis(30);

/// How long the empty operator runs before its baseline memory is read.
pub const WARM_UP: Duration = Duration::from_secs(5);

/// How long after the churn the operator's memory is first read.
pub const CHURN_REST: Duration = Duration::from_secs(10);

/// How long after the churn its memory and connections are read again, and judged: once the
/// deleted fleets' last resyncs (every 60 s) have left its queue and its connection pools have
/// closed the connections idle since the churn (after 90 s).
pub const CHURN_SETTLE: Duration = Duration::from_secs(120);

/// The operator's Kubernetes identity: its ServiceAccount, as in `config/`.
pub const OPERATOR_NAMESPACE: &str = "celld-system";

/// The operator's ServiceAccount name, as in `config/`.
pub const OPERATOR_ACCOUNT: &str = "celld-operator";

/// At most this many of the floor's fleets have pods starting at once (their StatefulSets
/// applied and not yet ready): at 1,000 fleets, every StatefulSet first was the fastest order
/// measured; at 10,000, all 10,000 StatefulSets first with 40,000 other children held back
/// was slower than the operator.
pub const STARTING_AT_ONCE: usize = 1_000;

/// Fleets per namespace. A platform with thousands of fleets has them in many namespaces (a
/// team's, an application's), and the control plane's Endpoints, EndpointSlice and
/// PodDisruptionBudget controllers scan every Service, pod or budget of a namespace on each change
/// of a pod in it: with every fleet in one namespace, their work grows with the square of the
/// fleets and takes the cores the API server and the operator need.
pub const FLEETS_PER_NAMESPACE: usize = 100;

/// The namespace of the bench's fleet `i`: `bench-<i / FLEETS_PER_NAMESPACE>`.
pub fn fleet_namespace(i: usize) -> String {
    format!("bench-{}", i / FLEETS_PER_NAMESPACE)
}

/// The namespaces `fleets` fleets are spread over (at least one).
pub fn fleet_namespaces(fleets: usize) -> usize {
    fleets.div_ceil(FLEETS_PER_NAMESPACE).max(1)
}

/// Pods one fake node takes (testenv's kwok nodes allow 1,000; some room is left): the fewest
/// fake nodes a run may have, where the calibration of the fake nodes starts.
pub const PODS_PER_NODE: usize = 800;

/// The calibration doubles the fake nodes until a floor is less than this much faster than the
/// one before (5 %).
pub const CALIBRATION_GAIN: f64 = 0.05;

/// The most fake nodes the calibration tries (unless the pods need more).
pub const MAX_NODES: usize = 64;

/// Extra kube-apiserver flags: audit events written within a second (the bench follows the
/// log while it runs), room for ten times the default events waiting to be written (a full
/// buffer drops them: "audit buffer queue blocked"), and no rotation of the log during a run.
pub const APISERVER_FLAGS: &str =
    "--audit-log-batch-max-wait=1s --audit-log-batch-buffer-size=100000 --audit-log-maxsize=100000";

/// Extra kube-controller-manager flags: 50 concurrent syncs for the controllers every fleet's
/// pods and Services pass through (the default is 5 each). With 5, the StatefulSet controller is
/// what limits converge from a few thousand fleets on: each sync waits on API round trips, so 5
/// workers update StatefulSet statuses far behind their pods (at 3,000 fleets in one run, 5,409
/// of 6,000 pods were running while 303 StatefulSets were ready and 2,966 waited in its queue),
/// and the control plane, not the API server, sets the pace of both runs.
pub const CONTROLLER_MANAGER_FLAGS: &str = "--concurrent-statefulset-syncs=50 \
--concurrent-endpoint-syncs=50 --concurrent-service-endpoint-syncs=50";

/// The audit username of the operator.
pub fn operator_username() -> String {
    format!("system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_ACCOUNT}")
}

/// Time allowed for `fleets` fleets to become ready (generous: the machine is shared): 2 minutes
/// and a second per fleet, so 2 h 49 min at 10,000.
pub fn ready_timeout(fleets: usize) -> Duration {
    Duration::from_secs(120 + fleets as u64)
}

/// The longest wait for the operator's writes to stop after `fleets` fleets are Ready:
/// [`SETTLE_LIMIT`], or [`SETTLE_PER_FLEET`] per fleet when that is longer (5 min at 10,000).
pub fn settle_limit(fleets: usize) -> Duration {
    SETTLE_LIMIT.max(SETTLE_PER_FLEET * u32::try_from(fleets).unwrap_or(u32::MAX))
}

/// A fleet's status first shows its nodes' capacity once the fleet is this old and its nodes
/// were read (the operator's own constant).
pub use celld_operator::capacity::reading::COUNTS_STAND_FOR as FIRST_CAPACITY_AGE;

/// The operator's default `--capacity-reads-per-second`, which the bench keeps.
pub const CAPACITY_READS_PER_SECOND: u64 = 10;

/// The longest wait, from the first create, for every one of `fleets` fleets to show its
/// capacity: [`FIRST_CAPACITY_AGE`] and twice a round of their nodes' reads at
/// [`CAPACITY_READS_PER_SECOND`] (1 h 12 min at 10,000).
pub fn capacity_round_limit(fleets: usize) -> Duration {
    FIRST_CAPACITY_AGE + Duration::from_secs(2 * pods_of(fleets) as u64 / CAPACITY_READS_PER_SECOND)
}

/// Pods of `fleets` fleets of [`REPLICAS`] nodes.
pub fn pods_of(fleets: usize) -> usize {
    fleets * REPLICAS as usize
}

/// `n` fake nodes, in words: "1 fake node", "4 fake nodes".
pub fn fake_nodes(n: usize) -> String {
    if n == 1 {
        "1 fake node".into()
    } else {
        format!("{n} fake nodes")
    }
}

/// Fake nodes for `pods` pods.
pub fn nodes_for(pods: usize) -> usize {
    pods.div_ceil(PODS_PER_NODE).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enough_nodes_for_every_pod() {
        assert_eq!(nodes_for(pods_of(0)), 1);
        assert_eq!(nodes_for(pods_of(100)), 1);
        assert_eq!(nodes_for(pods_of(400)), 1);
        assert_eq!(nodes_for(pods_of(401)), 2);
        assert_eq!(nodes_for(pods_of(1000)), 3);
        assert_eq!(nodes_for(52), 1);
        assert_eq!(nodes_for(pods_of(10_000)), 25);
        assert_eq!(fake_nodes(1), "1 fake node");
        assert_eq!(fake_nodes(4), "4 fake nodes");
    }

    #[test]
    fn fleets_are_spread_over_namespaces_of_a_hundred() {
        assert_eq!(fleet_namespace(0), "bench-0");
        assert_eq!(fleet_namespace(99), "bench-0");
        assert_eq!(fleet_namespace(100), "bench-1");
        assert_eq!(fleet_namespace(9_999), "bench-99");
        assert_eq!(fleet_namespaces(0), 1);
        assert_eq!(fleet_namespaces(100), 1);
        assert_eq!(fleet_namespaces(101), 2);
        assert_eq!(fleet_namespaces(10_000), 100);
    }

    #[test]
    fn waits_grow_with_the_fleets() {
        assert_eq!(ready_timeout(1000), Duration::from_secs(1120));
        assert_eq!(settle_limit(100), SETTLE_LIMIT);
        assert_eq!(settle_limit(4000), SETTLE_LIMIT);
        assert_eq!(settle_limit(10_000), Duration::from_secs(300));
    }
}
