//! The status the floor writes per fleet, the least an operator that reports readiness must
//! send: one, once its StatefulSet is ready and its children applied. It is the operator's
//! status, computed by its own code (`celld_operator::fleet::status::compute`) from what a reconcile
//! of the Ready fleet observes: its storage, the deployment pointer and the nodes' states the
//! floor read ([`reads`](crate::floor::reads)), its route and URL, every node ready. A
//! stub of a few fields would be a smaller write than the one every fleet's status needs (its
//! conditions, storage, deployment and nodes), and would make the floor faster than any
//! correct operator. Written as the operator writes it: server-side apply on the status
//! subresource. A fleet with spec.source (one in
//! [`SOURCED_EVERY`](crate::settings::SOURCED_EVERY)) gets it without status.source and
//! SourceSynced: the floor publishes no Worker.

use crate::settings::REPLICAS;
use celld_api::{CelldFleet, labels};
use celld_operator::buckets::pointer::Pointer;
use celld_operator::children::Desired;
use celld_operator::fleet::status::compute::compute;
use celld_operator::fleet::status::observation::{
    Acknowledged, Observation, ObservedStorage, Route,
};
use celld_operator::nodes::adoption::Reading;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::{Resource, ResourceExt};
use serde_json::json;
use std::sync::Arc;

/// What a reconcile of `fleet` (built as `desired`, its bucket serving `pointer`) observes once
/// the fleet is Ready, but its nodes' states ([`ready_status`] takes them).
pub fn observation(fleet: &CelldFleet, desired: &Desired<'_>, pointer: Pointer) -> Observation {
    Observation {
        generation: fleet.metadata.generation,
        desired: desired.replicas,
        storage: ObservedStorage::Resolved(desired.storage.clone(), pointer),
        // The floor's cluster serves no Gateway API (see `children::render`).
        route: Route::of(fleet.spec.ingress.as_deref(), false),
        url: Some(desired.url()),
        failures: Vec::new(),
        upgrade: desired.upgrade.progress.clone(),
        progress_deadline_s: fleet.spec.progress_deadline_seconds.into(),
        holders: Vec::new(),
        deployed_at: fleet.annotations().get(labels::DEPLOYED_AT).cloned(),
        source: None,
        nodes: None,
        capacity: None,
        autoscale: None,
        acknowledged: Acknowledged::of(&fleet.spec),
        held: None,
        fences: Vec::new(),
    }
}

/// The status apply body of fleet `name` as observed in `observation`, with every node ready
/// and its state as in `nodes` (none: the nodes were not read in time), at `now`.
pub fn ready_status(
    name: &str,
    observation: &Observation,
    nodes: Option<Reading>,
    now: Timestamp,
) -> serde_json::Value {
    let observation = Observation {
        nodes: nodes.map(Arc::new),
        ..observation.clone()
    };
    let statefulset = StatefulSet {
        metadata: ObjectMeta {
            generation: Some(1),
            ..ObjectMeta::default()
        },
        status: Some(StatefulSetStatus {
            observed_generation: Some(1),
            replicas: REPLICAS,
            ready_replicas: Some(REPLICAS),
            available_replicas: Some(REPLICAS),
            current_replicas: Some(REPLICAS),
            updated_replicas: Some(REPLICAS),
            ..StatefulSetStatus::default()
        }),
        ..StatefulSet::default()
    };
    let status = compute(None, &observation.observed(name, Some(&statefulset)), now);
    json!({
        "apiVersion": CelldFleet::api_version(&()),
        "kind": CelldFleet::kind(&()),
        "status": status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floor::children::render;
    use crate::floor::children::tests::published;
    use crate::measure::readiness::fleet_ready;
    use celld_api::contract::node_api::{NodeDeployment, NodeState};
    use celld_operator::nodes::adoption::Answer;
    use celld_operator::nodes::unanswered::Unanswered;
    use k8s_openapi::api::core::v1::Secret;

    /// The nodes of bench fleet `fleet`, each serving its version, as the floor reads them.
    pub fn serving(fleet: &str) -> Reading {
        let version = crate::workload::deployed_version(&format!("{fleet}-0")).unwrap();
        Reading {
            nodes: (0..REPLICAS)
                .map(|ordinal| {
                    let state = NodeState {
                        deployment: Some(NodeDeployment {
                            version: Some(version.clone()),
                            swapping: false,
                        }),
                        ..NodeState::default()
                    };
                    (format!("{fleet}-{ordinal}"), Answer::State(state, None))
                })
                .collect(),
            version,
        }
    }

    #[test]
    fn the_status_is_the_operators_for_a_ready_fleet() {
        let s3 = crate::workload::tests::s3();
        let mut fleet = crate::workload::fleet_manifest(3, &s3).unwrap();
        fleet.metadata.generation = Some(1);
        let rendered = render(&fleet, &Secret::default(), published("f3")).unwrap();
        let body = ready_status(
            "f3",
            &rendered.status,
            Some(serving("f3")),
            Timestamp::now(),
        );
        assert_eq!(body["kind"], "CelldFleet");
        let status = &body["status"];
        // As the operator wrote it for a Ready bench fleet: its conditions, in its order,
        // with their reasons and messages.
        let conditions: Vec<(String, String, String, String)> = status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let field = |k: &str| c[k].as_str().unwrap().to_string();
                (
                    field("type"),
                    field("status"),
                    field("reason"),
                    field("message"),
                )
            })
            .collect();
        let expected = [
            ("StorageResolved", "True", "Resolved"),
            ("Deployed", "True", "Deployed"),
            ("Adopted", "True", "Adopted"),
            ("RouteReady", "True", "IngressApplied"),
            ("DurabilityAtRisk", "False", "BucketDurability"),
            ("Progressing", "False", "Stable"),
            ("Degraded", "False", "AsExpected"),
            ("Ready", "True", "Serving"),
            ("Reconciling", "False", "AsExpected"),
            ("Stalled", "False", "AsExpected"),
        ];
        assert_eq!(
            conditions
                .iter()
                .map(|(t, s, r, _)| (t.as_str(), s.as_str(), r.as_str()))
                .collect::<Vec<_>>(),
            expected,
            "{conditions:#?}"
        );
        assert_eq!(
            conditions[2].3,
            "every ready node serves version 0000000000000003 (2/2)"
        );
        assert_eq!(status["deployment"]["version"], "0000000000000003");
        assert_eq!(status["deployment"]["adopted"], "2/2");
        assert_eq!(status["nodes"][1]["name"], "f3-1");
        assert_eq!(status["nodes"][1]["adoption"], "Adopted");
        assert_eq!(status["storage"]["bucket"], "s3://b/bench/f3");
        assert_eq!(status["url"], "http://f3.bench.example.com");
        assert_eq!(status["readyReplicas"], REPLICAS);
        assert_eq!(
            status["selector"],
            "platform.celld.dev/fleet=f3,platform.celld.dev/role=node"
        );
        fleet.status = Some(serde_json::from_value(status.clone()).unwrap());
        assert!(fleet_ready(&fleet));
    }

    #[test]
    fn with_nodes_that_cannot_be_read_the_status_is_ready_and_says_why() {
        /// The Adopted condition of `status`.
        fn adopted_of(status: &serde_json::Value) -> &serde_json::Value {
            status["conditions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["type"] == "Adopted")
                .unwrap()
        }
        let s3 = crate::workload::tests::s3();
        let mut fleet = crate::workload::fleet_manifest(3, &s3).unwrap();
        fleet.metadata.generation = Some(1);
        let rendered = render(&fleet, &Secret::default(), published("f3")).unwrap();
        let version = crate::workload::deployed_version("f3-0").unwrap();
        let why = Unanswered::Unreachable;
        let unread = Reading {
            nodes: (0..REPLICAS)
                .map(|ordinal| (format!("f3-{ordinal}"), Answer::Unreadable(why)))
                .collect(),
            version,
        };
        let body = ready_status("f3", &rendered.status, Some(unread), Timestamp::now());
        let status = &body["status"];
        let adopted = adopted_of(status);
        assert_eq!(
            (&adopted["status"], &adopted["reason"]),
            (&json!("Unknown"), &json!("NodeStateUnreadable"))
        );
        assert!(
            adopted["message"]
                .as_str()
                .unwrap()
                .contains(&why.to_string()),
            "{adopted}"
        );
        assert_eq!(status["deployment"]["adopted"], "0/2");
        fleet.status = Some(serde_json::from_value(status.clone()).unwrap());
        assert!(fleet_ready(&fleet), "Ready all the same: {status}");
        // Not read in time: Ready, Adopted Unknown for that.
        let body = ready_status("f3", &rendered.status, None, Timestamp::now());
        let status = &body["status"];
        let adopted = adopted_of(status);
        assert_eq!(
            (&adopted["status"], &adopted["reason"]),
            (&json!("Unknown"), &json!("NodeStateUnreadable"))
        );
        fleet.status = Some(serde_json::from_value(status.clone()).unwrap());
        assert!(fleet_ready(&fleet), "{status}");
    }
}
