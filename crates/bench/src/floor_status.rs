//! The status the floor writes per fleet, the least an operator that reports readiness must
//! send: one once its StatefulSet is ready and its children applied (`Ready=True`). Shaped like
//! the operator's (its replica counts, its selector, the condition as the operator words it),
//! written as the operator writes it: server-side apply on the status subresource.

use crate::settings::REPLICAS;
use celld_api::{CelldFleet, CelldFleetStatus, conditions, labels};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use serde_json::json;

/// The reason of the operator's `Ready=True` condition for a fleet whose nodes are all ready.
const SERVING: &str = "Serving";

/// The status apply body of fleet `name` at `generation`: every node ready, `Ready=True`.
pub fn ready_status(name: &str, generation: Option<i64>) -> serde_json::Value {
    let ready = conditions::make(
        &[],
        conditions::READY,
        Some(true),
        SERVING,
        format!("{REPLICAS}/{REPLICAS} nodes ready"),
        generation,
        Timestamp::now(),
    );
    body(name, generation, REPLICAS, vec![ready])
}

fn body(
    name: &str,
    generation: Option<i64>,
    ready: i32,
    conditions: Vec<Condition>,
) -> serde_json::Value {
    let status = CelldFleetStatus {
        observed_generation: generation,
        replicas: REPLICAS,
        selector: Some(labels::node_selector_string(name)),
        ready_replicas: ready,
        updated_replicas: ready,
        conditions,
        ..CelldFleetStatus::default()
    };
    json!({
        "apiVersion": CelldFleet::api_version(&()),
        "kind": CelldFleet::kind(&()),
        "status": status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readiness::fleet_ready;

    #[test]
    fn the_status_makes_the_fleet_ready_as_the_bench_watches_it() {
        let body = ready_status("f3", Some(1));
        assert_eq!(body["kind"], "CelldFleet");
        assert_eq!(body["status"]["readyReplicas"], REPLICAS);
        assert_eq!(
            body["status"]["selector"],
            "platform.celld.dev/fleet=f3,platform.celld.dev/role=node"
        );
        let mut fleet: CelldFleet = serde_json::from_value(json!({
            "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
            "metadata": {"name": "f3"},
            "spec": {"replicas": 2, "objectStorage": {"bucket": "s3://b/f3"}},
        }))
        .unwrap();
        assert!(!fleet_ready(&fleet));
        fleet.status = Some(serde_json::from_value(body["status"].clone()).unwrap());
        assert!(fleet_ready(&fleet));
        let ready = &fleet.status.unwrap().conditions[0];
        assert_eq!(
            (ready.reason.as_str(), ready.observed_generation),
            (SERVING, Some(1))
        );
    }
}
