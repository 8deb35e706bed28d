//! kube-apiserver crashes while the operator creates the children of new fleets, and comes
//! back: every fleet converges, each child exists once, owned by its fleet, and nothing is left
//! without an owner; a change made afterwards is applied within 30 s.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::Component;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::ListParams;
use kube::core::PartialObjectMeta;
use kube::{Api, ResourceExt};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const FLEETS: usize = 6;

/// Names of the children of kind `K` in the namespace, each with the uid of the fleet that
/// controls it (None: no controller).
async fn children<K>(plane: &Plane) -> Vec<(String, Option<String>)>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<PartialObjectMeta<K>> = Api::namespaced(plane.admin.clone(), &plane.ns);
    let selector = "app.kubernetes.io/managed-by=celld-operator";
    api.list(&ListParams::default().labels(selector))
        .await
        .expect("children listed")
        .items
        .iter()
        .map(|c| {
            let owner = c
                .owner_references()
                .iter()
                .find(|o| o.controller == Some(true) && o.kind == "CelldFleet")
                .map(|o| o.uid.clone());
            (c.name_any(), owner)
        })
        .collect()
}

#[tokio::test]
async fn fleets_converge_across_an_apiserver_crash_without_duplicate_or_orphan_children() {
    let plane = Plane::start("apiserver-restart").await;
    let _op = plane
        .operator(
            "operator",
            &["--leader-elect=false", "--namespace", &plane.ns],
        )
        .await;
    let names: Vec<String> = (0..FLEETS).map(|i| format!("fleet-{i}")).collect();
    for name in &names {
        plane.apply(&plane.fleet(name, 2, &[]).await).await;
    }
    // Mid-convergence: the operator is creating children.
    Component::KubeApiserver
        .crash_and_restart(plane.dir(), Duration::from_secs(3))
        .await
        .expect("kube-apiserver restarted");
    plane.wait_answering().await;
    let back = Instant::now();
    plane.wait_ready(&names, Duration::from_secs(120)).await;
    eprintln!(
        "{FLEETS} fleets Ready {:?} after the API server answered again",
        back.elapsed()
    );

    let uids: BTreeMap<String, String> = plane
        .api::<CelldFleet>()
        .list(&ListParams::default())
        .await
        .expect("fleets listed")
        .items
        .iter()
        .map(|f| (f.uid().expect("uid"), f.name_any()))
        .collect();
    let per_fleet = |suffixes: &[&str]| -> BTreeSet<String> {
        names
            .iter()
            .flat_map(|n| suffixes.iter().map(move |s| format!("{n}{s}")))
            .collect()
    };
    let kinds = [
        (
            "StatefulSet",
            children::<StatefulSet>(&plane).await,
            per_fleet(&[""]),
        ),
        (
            "Service",
            children::<Service>(&plane).await,
            per_fleet(&["", "-peer"]),
        ),
        (
            "NetworkPolicy",
            children::<NetworkPolicy>(&plane).await,
            per_fleet(&[""]),
        ),
        (
            "PodDisruptionBudget",
            children::<PodDisruptionBudget>(&plane).await,
            per_fleet(&[""]),
        ),
    ];
    for (kind, found, expected) in kinds {
        let found_names: Vec<&String> = found.iter().map(|(n, _)| n).collect();
        assert_eq!(found.len(), expected.len(), "{kind}: {found_names:?}");
        let distinct: BTreeSet<String> = found.iter().map(|(n, _)| n.clone()).collect();
        assert_eq!(distinct, expected, "{kind}");
        for (name, owner) in &found {
            let fleet = owner.as_ref().and_then(|uid| uids.get(uid));
            let own_fleet = fleet.is_some_and(|f| name == f || *name == format!("{f}-peer"));
            assert!(
                own_fleet,
                "{kind} {name} is controlled by {owner:?}, not by its fleet"
            );
        }
    }

    // The watches work again: a change is applied promptly.
    let changed = Instant::now();
    plane.apply(&plane.fleet("fleet-0", 3, &[]).await).await;
    let applied = plane
        .wait_statefulset("fleet-0", "3 replicas", APPLIED_WITHIN, |s| {
            s.spec.as_ref().and_then(|s| s.replicas) == Some(3)
        })
        .await;
    eprintln!(
        "a change after the restart was applied in {:?}",
        applied - changed
    );
    plane.stop().await;
}
