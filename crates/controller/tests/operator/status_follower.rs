//! A fleet reports Ready as soon as its StatefulSet is ready, not at its next turn in the
//! reconcile queue: with a debounce far longer than the nodes take to start, Ready still follows
//! the StatefulSet within seconds, written by the status follower. A ResourceQuota of zero pods
//! holds the nodes back until the first reconcile has reported the fleet not ready.

use crate::support::*;
use celld_testkit::{Check, wait_for_object, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::ResourceQuota;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;
use std::time::{Duration, Instant};

/// Longer than the test's patience for Ready: a reconcile cannot be what reports it.
const DEBOUNCE: Duration = Duration::from_secs(30);
/// How long after its StatefulSet is ready the fleet may still say it is not.
const LAG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn ready_follows_the_statefulset_ahead_of_the_reconcile() {
    let env = celld_testkit::TestEnv::new("follow")
        .await
        .expect("the local control plane is up (make cluster-up)");
    celld_testkit::install_crds(&env.client())
        .await
        .expect("CRDs installed");
    let client = operator_client(&env).await;
    let op = start(
        client,
        celld_operator::shared::settings::Settings {
            debounce: DEBOUNCE,
            resync: Duration::from_secs(600),
            pending_resync: Duration::from_secs(600),
            ..settings(&env, "op-1")
        },
    );
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": {"name": "no-pods"}, "spec": {"hard": {"pods": "0"}},
    }))
    .expect("ResourceQuota");
    let quotas = env.api::<ResourceQuota>();
    quotas
        .create(&PostParams::default(), &quota)
        .await
        .expect("ResourceQuota created");
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "follow");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000f1").await;
    apply_fleet(
        &env,
        &inline_fleet("web", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;

    // The first reconcile (one debounce after the fleet appeared) creates the StatefulSet and
    // reports it not ready yet.
    let not_ready = wait_for_object(
        &env.api::<celld_api::CelldFleet>(),
        "web",
        "a first status, Ready=False",
        DEBOUNCE + TIMEOUT,
        |f| {
            f.status
                .as_ref()
                .and_then(|s| celld_api::conditions::find(&s.conditions, "Ready"))
                .is_some_and(|c| c.status == "False")
        },
    )
    .await
    .expect("the first reconcile writes a status");
    assert_eq!(op.metrics.followed_statuses(), 0, "{:?}", not_ready.status);
    quotas
        .delete("no-pods", &DeleteParams::default())
        .await
        .expect("ResourceQuota deleted");

    wait_for_object(
        &env.api::<StatefulSet>(),
        "web",
        "StatefulSet with 2 ready replicas",
        TIMEOUT,
        |sts| sts.status.as_ref().and_then(|s| s.ready_replicas) == Some(2),
    )
    .await
    .expect("the nodes start");
    let nodes_ready = Instant::now();
    let fleet = wait_for_object(
        &env.api::<celld_api::CelldFleet>(),
        "web",
        "Ready=True",
        TIMEOUT,
        |f| {
            f.status
                .as_ref()
                .and_then(|s| celld_api::conditions::find(&s.conditions, "Ready"))
                .is_some_and(|c| c.status == "True")
        },
    )
    .await
    .expect("the fleet reports Ready");
    let lag = nodes_ready.elapsed();
    assert!(
        lag < LAG,
        "Ready came {lag:?} after the StatefulSet was ready (debounce {DEBOUNCE:?}): {:?}",
        fleet.status
    );
    // The follower counts its write once the API server answered it, just after the test saw it.
    let metrics = op.metrics.clone();
    wait_until("the status follower counted its write", LAG, || {
        let followed = metrics.followed_statuses();
        async move {
            if followed >= 1 {
                Check::Done(())
            } else {
                Check::Pending(format!("{followed} statuses followed"))
            }
        }
    })
    .await
    .expect("the status follower, not a reconcile, wrote Ready");
    let status = fleet.status.expect("status");
    assert_eq!(status.ready_replicas, 2);
    assert_eq!(status.observed_generation, fleet.metadata.generation);
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
