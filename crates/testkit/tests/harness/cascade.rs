//! The garbage collector deletes dependents of a deleted owner.

use celld_testkit::{
    DEFAULT_TIMEOUT, TestEnv, is_running_and_ready, wait_for_deletion, wait_for_object,
};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ObjectMeta, PostParams};

use crate::TestResult;
use crate::statefulset::statefulset;

#[tokio::test]
async fn deleting_an_owner_configmap_deletes_its_dependent() -> TestResult {
    let env = TestEnv::new("cascade-configmap").await?;
    let maps = env.api::<ConfigMap>();
    let owner = maps
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta {
                    name: Some("owner".into()),
                    ..ObjectMeta::default()
                },
                ..ConfigMap::default()
            },
        )
        .await?;
    let dependent = ConfigMap {
        metadata: ObjectMeta {
            name: Some("dependent".into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: "owner".into(),
                uid: owner.metadata.uid.clone().unwrap_or_default(),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    maps.create(&PostParams::default(), &dependent).await?;

    maps.delete("owner", &DeleteParams::background()).await?;
    wait_for_deletion(&maps, "dependent", DEFAULT_TIMEOUT).await?;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn deleting_a_statefulset_deletes_its_pods() -> TestResult {
    let env = TestEnv::new("cascade-statefulset").await?;
    let sets = env.api::<StatefulSet>();
    sets.create(&PostParams::default(), &statefulset("db", 1, false))
        .await?;
    let pods = env.api::<Pod>();
    wait_for_object(
        &pods,
        "db-0",
        "StatefulSet pod Running and Ready",
        DEFAULT_TIMEOUT,
        is_running_and_ready,
    )
    .await?;

    sets.delete("db", &DeleteParams::foreground()).await?;
    wait_for_deletion(&pods, "db-0", DEFAULT_TIMEOUT).await?;
    wait_for_deletion(&sets, "db", DEFAULT_TIMEOUT).await?;
    env.cleanup().await?;
    Ok(())
}
