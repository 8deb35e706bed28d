//! Deleting a test namespace removes it with its pods and claims (namespace controller, kwok's
//! pod-delete stage, PVC protection).

use celld_testkit::{TestEnv, create_running_pod, fake_pod};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::PostParams;

use crate::TestResult;

#[tokio::test]
async fn cleanup_and_wait_removes_the_namespace_with_its_contents() -> TestResult {
    let env = TestEnv::new("namespace").await?;
    create_running_pod(&env.api::<Pod>(), &fake_pod("busy")).await?;
    let claim: PersistentVolumeClaim = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "claim" },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": { "requests": { "storage": "1Gi" } },
        },
    }))?;
    env.api::<PersistentVolumeClaim>()
        .create(&PostParams::default(), &claim)
        .await?;
    env.cleanup_and_wait().await?;
    Ok(())
}
