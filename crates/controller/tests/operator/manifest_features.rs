//! The manifest of the deployed version: a feature the nodes cannot serve is reported on the
//! fleet (Degraded, FeatureUnsupported, one Warning Event) naming the feature, and the celld
//! version when the image predates it; containers never activate on the operator's pods, on
//! any version. A manifest that is not one is reported (ManifestUnreadable), never taken as
//! requiring nothing. A later deploy without the feature clears it.

use crate::support::*;
use celld_api::CelldFleet;
use celld_api::contract::manifest::manifest_key;
use celld_fixtures::pointer::SCRIPT;
use celld_testkit::{Check, S3Settings, TestEnv, wait_until};
use kube::api::{Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

const CONTAINERS: &str = r#"{"version":"v","script":"hello","modules":[],"containers":[{"class_name":"Sandbox","image":"./Dockerfile"}],"required_features":["containers-v1"]}"#;
const PLAIN: &str = r#"{"version":"v","script":"hello","modules":[],"required_features":[]}"#;

/// Deploys `version` as celld does: its manifest first, then the pointer.
async fn deploy(s3: &S3Settings, prefix: &str, version: &str, manifest: &str) {
    s3.put_object(
        &format!("{prefix}/{}", manifest_key(SCRIPT, version)),
        manifest.as_bytes().to_vec(),
    )
    .await
    .expect("manifest written to the test S3 server");
    publish_pointer(s3, prefix, version).await;
}

/// Adds a node to fleet `name` and waits for a status written from that generation.
async fn add_a_node(env: &TestEnv, name: &str) {
    let api = env.api::<CelldFleet>();
    let replicas = api.get(name).await.expect("the fleet").spec.replicas;
    let fleet = api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": replicas + 1}})),
        )
        .await
        .expect("replicas set");
    wait_until("a status from the new generation", TIMEOUT, || async {
        let seen = api.get(name).await.ok().and_then(|f| f.status);
        match seen.as_ref().and_then(|s| s.observed_generation) {
            g if g.is_some() && g == fleet.metadata.generation => Check::Done(()),
            g => Check::Pending(format!("observedGeneration {g:?}")),
        }
    })
    .await
    .expect("the fleet's status follows the new generation");
}

/// The Warning Events `reason` on fleet `name`, once there is one and a few reconciles later.
async fn settled_warnings(env: &TestEnv, name: &str, reason: &str) -> usize {
    wait_events(env, name, "Warning", reason).await;
    // The fleet is reconciled every resync period while it is degraded.
    tokio::time::sleep(Duration::from_secs(6)).await;
    events(env, name, "Warning", reason).await.len()
}

#[tokio::test]
async fn containers_are_reported_once_and_a_deploy_without_them_clears_it() {
    let (env, op) = env_with_operator("containers").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "containers");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    deploy(&s3, &prefix, "00000000000000c1", CONTAINERS).await;
    let extra = json!({"image": "ghcr.io/denoland/celld:v0.6.1"});
    apply_fleet(
        &env,
        &inline_fleet("boxes", &s3, &prefix, extra).expect("a CelldFleet"),
    )
    .await;

    let fleet = wait_condition(
        &env,
        "boxes",
        "Degraded",
        "True",
        Some("FeatureUnsupported"),
    )
    .await;
    let degraded = message(&fleet, "Degraded");
    assert!(
        degraded.starts_with(
            "the deployed version 00000000000000c1 of Worker hello requires feature containers-v1"
        ) && degraded.contains("the operator's restricted pods have none")
            && degraded.contains("remove `containers` from the Worker")
            && !degraded.contains("spec.image runs"),
        "{degraded}"
    );
    assert_eq!(
        settled_warnings(&env, "boxes", "FeatureUnsupported").await,
        1
    );

    deploy(&s3, &prefix, "00000000000000c2", PLAIN).await;
    wait_condition(&env, "boxes", "Degraded", "False", Some("AsExpected")).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn a_feature_newer_than_the_image_names_the_version_and_a_broken_manifest_is_reported() {
    let (env, op) = env_with_operator("oldfeatures").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "oldfeatures");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    deploy(&s3, &prefix, "00000000000000d1", CONTAINERS).await;
    let extra = json!({"image": "ghcr.io/denoland/celld:v0.5.1"});
    apply_fleet(
        &env,
        &inline_fleet("old", &s3, &prefix, extra).expect("a CelldFleet"),
    )
    .await;

    let fleet = wait_condition(&env, "old", "Degraded", "True", Some("FeatureUnsupported")).await;
    let degraded = message(&fleet, "Degraded");
    assert!(
        degraded.starts_with(
            "the deployed version 00000000000000d1 of Worker hello requires feature containers-v1, which celld serves from v0.6.0 on, and spec.image runs v0.5.1"
        ) && degraded.contains("needs a container engine"),
        "{degraded}"
    );

    deploy(
        &s3,
        &prefix,
        "00000000000000d2",
        "<Error><Code>NoSuchKey</Code></Error>",
    )
    .await;
    let fleet = wait_condition(&env, "old", "Degraded", "True", Some("ManifestUnreadable")).await;
    let degraded = message(&fleet, "Degraded");
    assert!(
        degraded.contains("/deploy/hello/00000000000000d2/manifest.json is not a celld manifest"),
        "{degraded}"
    );
    // Another status change while the manifest stays unreadable repeats no Warning.
    add_a_node(&env, "old").await;
    assert_eq!(settled_warnings(&env, "old", "ManifestUnreadable").await, 1);

    deploy(&s3, &prefix, "00000000000000d3", PLAIN).await;
    wait_condition(&env, "old", "Degraded", "False", Some("AsExpected")).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
