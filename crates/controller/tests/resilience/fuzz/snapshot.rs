//! What a batch's checks read from the API server in one round (fleets, stores, rollouts and
//! the fleets' children), and the leak check of what a batch left.

use super::verdict::Children;
use crate::cluster::Cluster;
use crate::fixtures::api;
use crate::leaks::LeakScan;
use kube::api::{DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Api, ResourceExt};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn child_resources(gateway_api: bool) -> Vec<ApiResource> {
    let mut kinds = vec![
        ("apps", "v1", "StatefulSet", "statefulsets"),
        ("", "v1", "Service", "services"),
        (
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
        ),
        (
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
        ),
        ("networking.k8s.io", "v1", "Ingress", "ingresses"),
        ("batch", "v1", "Job", "jobs"),
    ];
    if gateway_api {
        kinds.push(("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes"));
    }
    kinds
        .into_iter()
        .map(|(g, v, k, p)| ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(g, v, k), p))
        .collect()
}

/// Every object of `api`, as JSON; `None` when the API server did not answer.
async fn list(api: &Api<DynamicObject>) -> Option<Vec<Value>> {
    let list = api.list(&ListParams::default()).await.ok()?;
    Some(
        list.items
            .iter()
            .filter_map(|o| serde_json::to_value(o).ok())
            .collect(),
    )
}

fn by_name(objects: Vec<Value>) -> BTreeMap<String, Value> {
    objects
        .into_iter()
        .map(|o| {
            (
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                o,
            )
        })
        .collect()
}

/// Everything the batch's checks read, listed once per round: the fleets, stores and rollouts
/// whole, the fleets' children (and deploy Jobs) by name only.
pub struct Snapshot {
    pub fleets: BTreeMap<String, Value>,
    pub stores: BTreeMap<String, Value>,
    pub rollouts: BTreeMap<String, Value>,
    pub children: Children,
    /// Whether the API server answered every list, and quickly: while it does not, the
    /// operator cannot write statuses either, so the wait for them does not run down.
    pub healthy: bool,
}

/// A list slower than this means the API server is stalled.
const STALLED: Duration = Duration::from_secs(5);

pub async fn snapshot(cluster: &Cluster, ns: &str) -> Snapshot {
    let started = Instant::now();
    let fleets = list(&api(&cluster.client, ns, "CelldFleet")).await;
    let stores = list(&api(&cluster.client, ns, "CelldObjectStore")).await;
    let rollouts = list(&api(&cluster.client, ns, "CelldRollout")).await;
    let mut healthy = fleets.is_some() && stores.is_some() && rollouts.is_some();
    let mut children = Children::new();
    for resource in child_resources(cluster.gateway_api) {
        let api: Api<DynamicObject> = Api::namespaced_with(cluster.client.clone(), ns, &resource);
        match api.list_metadata(&ListParams::default()).await {
            Ok(list) => {
                for object in list.items {
                    let name = object.metadata.name.unwrap_or_default();
                    children.insert(format!("{}/{name}", resource.kind));
                }
            }
            Err(_) => healthy = false,
        }
    }
    Snapshot {
        fleets: by_name(fleets.unwrap_or_default()),
        stores: by_name(stores.unwrap_or_default()),
        rollouts: by_name(rollouts.unwrap_or_default()),
        children,
        healthy: healthy && started.elapsed() < STALLED,
    }
}

/// Looks for `credentials` in every fleet, store, rollout and child object of `ns`.
pub async fn search_leaks(
    cluster: &Cluster,
    ns: &str,
    snap: &Snapshot,
    credentials: &[String],
    leaks: &mut LeakScan,
) {
    for (kind, objects) in [
        ("CelldFleet", &snap.fleets),
        ("CelldObjectStore", &snap.stores),
        ("CelldRollout", &snap.rollouts),
    ] {
        for (name, object) in objects {
            leaks.search(
                kind,
                &format!("{kind} {ns}/{name}"),
                &object.to_string(),
                credentials,
            );
        }
    }
    for resource in child_resources(cluster.gateway_api) {
        let api: Api<DynamicObject> = Api::namespaced_with(cluster.client.clone(), ns, &resource);
        let objects = api.list(&ListParams::default()).await.unwrap_or_else(|e| {
            panic!("listing {} in {ns} for the leak check: {e}", resource.kind)
        });
        for object in objects.items {
            let place = format!("{} {ns}/{}", resource.kind, object.name_any());
            let text = serde_json::to_string(&object).expect("an object as JSON");
            leaks.search(&resource.kind, &place, &text, credentials);
        }
    }
}
