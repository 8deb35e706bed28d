//! A StatefulSet with a volumeClaimTemplate becomes ready on the fake nodes, with its PVCs bound
//! by kwok's volume stages through the default StorageClass.

use celld_testkit::{DEFAULT_TIMEOUT, TestEnv, wait_for_object};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::PostParams;

use crate::TestResult;

/// A StatefulSet `name` with `replicas` pods and, if `with_volume`, a 1Gi claim `data` per pod.
pub fn statefulset(name: &str, replicas: i32, with_volume: bool) -> StatefulSet {
    let mut manifest = serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": { "name": name },
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [{ "name": "app", "image": "testenv.invalid/app:1" }] },
            },
        },
    });
    if with_volume {
        manifest["spec"]["volumeClaimTemplates"] = serde_json::json!([{
            "metadata": { "name": "data" },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": { "requests": { "storage": "1Gi" } },
            },
        }]);
    }
    serde_json::from_value(manifest).expect("valid StatefulSet")
}

#[tokio::test]
async fn statefulset_with_claims_becomes_ready_with_bound_pvcs() -> TestResult {
    let env = TestEnv::new("statefulset").await?;
    let sets = env.api::<StatefulSet>();
    sets.create(&PostParams::default(), &statefulset("web", 2, true))
        .await?;

    let ready = wait_for_object(&sets, "web", "2/2 replicas ready", DEFAULT_TIMEOUT, |s| {
        s.status.as_ref().and_then(|st| st.ready_replicas) == Some(2)
    })
    .await?;
    assert_eq!(ready.status.and_then(|s| s.available_replicas), Some(2));

    let claims = env.api::<PersistentVolumeClaim>();
    for name in ["data-web-0", "data-web-1"] {
        let claim = wait_for_object(&claims, name, "PVC Bound", DEFAULT_TIMEOUT, |c| {
            c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
        })
        .await?;
        let spec = claim.spec.unwrap_or_default();
        assert_eq!(spec.storage_class_name.as_deref(), Some("kwok-volume"));
        assert!(spec.volume_name.is_some_and(|v| v.starts_with("pvc-")));
    }
    env.cleanup().await?;
    Ok(())
}
