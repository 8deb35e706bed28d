//! A new fleet's NetworkPolicy and peer Service exist before its StatefulSet: its pods never
//! run outside their fence (the internal port carries celld's unauthenticated operator API) or
//! without the DNS name they advertise to their peers. Its public Service comes after the pods,
//! or, with `--public-service-first` (or while the API server is slow to create Services),
//! before them.

use crate::support::*;
use celld_operator::shared::settings::PublicServiceFirst;
use celld_testkit::TestEnv;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// The resourceVersion each object was first seen at, by name.
type Seen = Arc<Mutex<BTreeMap<String, u64>>>;

/// Watches `api` from now on and records the resourceVersion each object is added at: its
/// creation's, as the watch starts before any of them exists. The API server's one etcd
/// numbers every write of the test's control plane in the order it happened.
async fn creations<K>(api: Api<K>) -> (Seen, JoinHandle<()>)
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + 'static,
{
    let from = api
        .list_metadata(&ListParams::default().limit(1))
        .await
        .expect("list to start the watch from")
        .metadata
        .resource_version
        .expect("a list has a resourceVersion");
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let task = tokio::spawn(async move {
        let mut events = api
            .watch(&WatchParams::default(), &from)
            .await
            .expect("watch started")
            .boxed();
        while let Some(Ok(event)) = events.next().await {
            let WatchEvent::Added(object) = event else {
                continue;
            };
            let version = object
                .resource_version()
                .and_then(|v| v.parse().ok())
                .expect("a numeric resourceVersion");
            record
                .lock()
                .expect("record")
                .entry(object.name_any())
                .or_insert(version);
        }
    });
    (seen, task)
}

fn created(seen: &Seen, what: &str, name: &str) -> u64 {
    *seen
        .lock()
        .expect("seen")
        .get(name)
        .unwrap_or_else(|| panic!("the watch saw {what} {name} created"))
}

/// When a new fleet's children were created, in the API server's order.
struct Created {
    policy: u64,
    peer_service: u64,
    public_service: u64,
    statefulset: u64,
}

/// Creates fleet `web` and returns when its children were created, once it is Ready.
async fn creation_order(env: &TestEnv) -> Created {
    let (policies, policies_task) = creations(env.api::<NetworkPolicy>()).await;
    let (services, services_task) = creations(env.api::<Service>()).await;
    let (statefulsets, statefulsets_task) = creations(env.api::<StatefulSet>()).await;
    deployed_fleet(env, "web", "00000000000000a1", serde_json::json!({})).await;
    wait_condition(env, "web", "Ready", "True", Some("Serving")).await;

    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet");
    let peer = sts
        .spec
        .as_ref()
        .map(|s| s.service_name.clone().unwrap_or_default())
        .expect("the StatefulSet names its peer Service");
    let created = Created {
        policy: created(&policies, "NetworkPolicy", "web"),
        peer_service: created(&services, "Service", &peer),
        public_service: created(&services, "Service", "web"),
        statefulset: created(&statefulsets, "StatefulSet", "web"),
    };
    for task in [policies_task, services_task, statefulsets_task] {
        task.abort();
    }
    created
}

/// The fence and the peer Service before the StatefulSet.
fn assert_pods_fenced_and_named(c: &Created) {
    assert!(
        c.policy < c.statefulset,
        "NetworkPolicy created at {}, after the StatefulSet at {}",
        c.policy,
        c.statefulset
    );
    assert!(
        c.peer_service < c.statefulset,
        "peer Service created at {}, after the StatefulSet at {}",
        c.peer_service,
        c.statefulset
    );
}

#[tokio::test]
async fn fence_and_peer_names_come_before_the_pods() {
    let (env, _op) = env_with_operator("order").await;
    let created = creation_order(&env).await;
    assert_pods_fenced_and_named(&created);
    // One fleet started: nothing says the API server is slow to create Services.
    assert!(
        created.public_service > created.statefulset,
        "public Service created at {}, before the StatefulSet at {}",
        created.public_service,
        created.statefulset
    );
}

#[tokio::test]
async fn the_public_service_can_come_before_the_pods() {
    let env = env_with_crds("order-first").await;
    let mut settings = settings(&env, "op-1");
    settings.public_service_first = PublicServiceFirst::Always;
    let _op = start(operator_client(&env).await, settings);
    let created = creation_order(&env).await;
    assert_pods_fenced_and_named(&created);
    assert!(
        created.public_service < created.statefulset,
        "public Service created at {}, after the StatefulSet at {}",
        created.public_service,
        created.statefulset
    );
}
