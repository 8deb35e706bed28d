//! Deleting a fleet: deletion cascading to every child and the fleet's pods.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{Check, wait_for_deletion, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::{DeleteParams, ListParams};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn deleting_a_fleet_deletes_what_it_owns() {
    let (env, op) = env_with_operator("cascade").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "cascade");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000d1").await;
    apply_fleet(
        &env,
        &inline_fleet(
            "gone",
            &s3,
            &prefix,
            json!({"ingress": {"hostname": "gone.example.com", "ingressClass": "nginx"}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "gone", "Ready", "True", None).await;

    env.api::<CelldFleet>()
        .delete("gone", &DeleteParams::foreground())
        .await
        .expect("fleet deleted");
    let t = Duration::from_secs(60);
    wait_for_deletion(&env.api::<StatefulSet>(), "gone", t)
        .await
        .expect("StatefulSet collected");
    wait_for_deletion(&env.api::<Service>(), "gone", t)
        .await
        .expect("Service collected");
    wait_for_deletion(&env.api::<Service>(), "gone-peer", t)
        .await
        .expect("peer Service collected");
    wait_for_deletion(&env.api::<Ingress>(), "gone", t)
        .await
        .expect("Ingress collected");
    wait_for_deletion(&env.api::<PodDisruptionBudget>(), "gone", t)
        .await
        .expect("PDB collected");
    wait_for_deletion(&env.api::<NetworkPolicy>(), "gone", t)
        .await
        .expect("NetworkPolicy collected");
    let pods: Api<k8s_openapi::api::core::v1::Pod> = env.api();
    wait_until("the fleet's pods to go", t, || async {
        let left = pods
            .list(&ListParams::default().labels("platform.celld.dev/fleet=gone"))
            .await
            .map(|l| l.items.len());
        if left.as_ref().is_ok_and(|n| *n == 0) {
            Check::Done(())
        } else {
            Check::Pending(format!("{left:?}"))
        }
    })
    .await
    .expect("pods deleted");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
