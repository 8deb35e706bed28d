//! A fleet holding at zero nodes without a deployment, scaling up when one appears and following
//! the next.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::wait_for_object;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::json;

#[tokio::test]
async fn fleet_waits_at_zero_nodes_until_a_deployment_appears() {
    let (env, op) = env_with_operator("pending").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "pending");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    apply_fleet(
        &env,
        &inline_fleet("app", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;

    let fleet = wait_condition(&env, "app", "Deployed", "False", Some("NoDeployment")).await;
    assert!(
        fleet
            .status
            .as_ref()
            .and_then(|s| s.deployment.as_ref())
            .is_none()
    );
    let sts = env
        .api::<StatefulSet>()
        .get("app")
        .await
        .expect("StatefulSet exists while held");
    assert_eq!(
        sts.spec.as_ref().and_then(|s| s.replicas),
        Some(0),
        "held at 0 nodes without a deployment"
    );
    assert!(
        env.api::<PodDisruptionBudget>()
            .get_opt("app")
            .await
            .expect("read PodDisruptionBudget")
            .is_none(),
        "no PodDisruptionBudget over 0 nodes"
    );

    publish_pointer(&s3, &prefix, "00000000000000b2").await;
    let fleet = wait_condition(&env, "app", "Ready", "True", None).await;
    assert_eq!(
        fleet
            .status
            .and_then(|s| s.deployment)
            .map(|d| d.version)
            .as_deref(),
        Some("00000000000000b2")
    );
    let sts = env
        .api::<StatefulSet>()
        .get("app")
        .await
        .expect("StatefulSet");
    assert_eq!(sts.spec.as_ref().and_then(|s| s.replicas), Some(2));
    env.api::<PodDisruptionBudget>()
        .get("app")
        .await
        .expect("a PodDisruptionBudget once the 2 nodes run");

    publish_pointer(&s3, &prefix, "00000000000000b3").await;
    wait_for_object(
        &env.api::<CelldFleet>(),
        "app",
        "the new version in status",
        TIMEOUT,
        |f| {
            f.status
                .as_ref()
                .and_then(|s| s.deployment.as_ref())
                .is_some_and(|d| d.version == "00000000000000b3")
        },
    )
    .await
    .expect("new version reported");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
