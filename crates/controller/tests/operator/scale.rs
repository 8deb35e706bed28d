//! Scaling a fleet through its scale subresource (what `kubectl scale` and a
//! HorizontalPodAutoscaler use): the StatefulSet follows, the status reports the replicas and
//! the selector of the node pods, and the PodDisruptionBudget exists exactly while there is more
//! than one node.

use crate::support::*;
use celld_api::{CelldFleet, labels};
use celld_testkit::{TestEnv, wait_for_deletion, wait_for_object};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

/// Waits until the StatefulSet has `replicas` in its spec and status and the fleet reports them.
async fn wait_scaled(env: &TestEnv, name: &str, replicas: i32) -> CelldFleet {
    wait_for_object(
        &env.api::<StatefulSet>(),
        name,
        &format!("StatefulSet scaled to {replicas}"),
        TIMEOUT,
        |sts| {
            sts.spec.as_ref().and_then(|s| s.replicas) == Some(replicas)
                && sts.status.as_ref().map(|s| s.replicas) == Some(replicas)
        },
    )
    .await
    .expect("the StatefulSet follows the fleet's replicas");
    wait_for_object(
        &env.api::<CelldFleet>(),
        name,
        &format!("status.replicas {replicas}"),
        TIMEOUT,
        |f| {
            f.status
                .as_ref()
                .is_some_and(|s| s.replicas == replicas && s.ready_replicas == replicas)
        },
    )
    .await
    .expect("the fleet reports the StatefulSet's replicas")
}

/// The fleet's pods its reported selector selects.
async fn selected_pods(env: &TestEnv, selector: &str) -> Vec<String> {
    let mut names: Vec<String> = env
        .api::<Pod>()
        .list(&ListParams::default().labels(selector))
        .await
        .expect("pods listed")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.metadata.name)
        .collect();
    names.sort();
    names
}

async fn wait_pdb(env: &TestEnv, name: &str) -> PodDisruptionBudget {
    wait_for_object(
        &env.api::<PodDisruptionBudget>(),
        name,
        "PodDisruptionBudget of a fleet with more than one node",
        TIMEOUT,
        |_| true,
    )
    .await
    .expect("the PodDisruptionBudget exists")
}

fn scale_of(scale: &Scale) -> (Option<i32>, i32, Option<&str>) {
    let status = scale.status.as_ref().expect("scale status");
    (
        scale.spec.as_ref().and_then(|s| s.replicas),
        status.replicas,
        status.selector.as_deref(),
    )
}

#[tokio::test]
async fn scale_subresource_drives_the_statefulset_status_and_pdb() {
    let (env, op) = env_with_operator("scale").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "scale");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000c1").await;
    apply_fleet(
        &env,
        &inline_fleet("web", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "web", "Ready", "True", Some("Serving")).await;

    let fleets = env.api::<CelldFleet>();
    let selector = labels::node_selector_string("web");
    let fleet = wait_scaled(&env, "web", 2).await;
    assert_eq!(
        fleet.status.as_ref().and_then(|s| s.selector.as_deref()),
        Some(selector.as_str())
    );
    assert_eq!(selected_pods(&env, &selector).await, ["web-0", "web-1"]);
    let scale = fleets.get_scale("web").await.expect("scale read");
    assert_eq!(scale_of(&scale), (Some(2), 2, Some(selector.as_str())));
    let pdb = wait_pdb(&env, "web").await;
    assert_eq!(
        pdb.spec.and_then(|s| s.max_unavailable),
        Some(IntOrString::Int(1))
    );

    // 2 -> 1 through a patch of the scale subresource: one node, no PodDisruptionBudget.
    fleets
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .expect("scale patched to 1");
    assert_eq!(
        fleets.get("web").await.expect("fleet").spec.replicas,
        1,
        "the scale subresource writes spec.replicas"
    );
    wait_scaled(&env, "web", 1).await;
    wait_for_deletion(&env.api::<PodDisruptionBudget>(), "web", TIMEOUT)
        .await
        .expect("scaling to one node removes the PodDisruptionBudget");
    assert_eq!(selected_pods(&env, &selector).await, ["web-0"]);

    // 1 -> 3 through a replace of the scale subresource: the PodDisruptionBudget is back.
    let mut scale = fleets.get_scale("web").await.expect("scale read");
    assert_eq!(scale_of(&scale), (Some(1), 1, Some(selector.as_str())));
    if let Some(spec) = scale.spec.as_mut() {
        spec.replicas = Some(3);
    }
    fleets
        .replace_scale("web", &PostParams::default(), &scale)
        .await
        .expect("scale replaced with 3");
    wait_scaled(&env, "web", 3).await;
    let pdb = wait_pdb(&env, "web").await;
    assert_eq!(
        pdb.spec.and_then(|s| s.max_unavailable),
        Some(IntOrString::Int(1))
    );
    assert_eq!(
        selected_pods(&env, &selector).await,
        ["web-0", "web-1", "web-2"]
    );
    let scale = fleets.get_scale("web").await.expect("scale read");
    assert_eq!(scale_of(&scale), (Some(3), 3, Some(selector.as_str())));

    // `kubectl scale` goes through the same subresource, and the CRD's bounds still hold.
    env.kubectl()
        .run(["scale", "celldfleet/web", "--replicas=2"])
        .await
        .expect("kubectl scale");
    wait_scaled(&env, "web", 2).await;
    let refused = env
        .kubectl()
        .run(["scale", "celldfleet/web", "--replicas=1001"])
        .await
        .expect_err("spec.replicas stays at most 1000 through the scale subresource");
    assert!(refused.to_string().contains("1000"), "{refused}");
    assert_eq!(fleets.get("web").await.expect("fleet").spec.replicas, 2);

    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
