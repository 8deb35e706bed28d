//! KEDA's CRDs are installed (no KEDA runs): ScaledObjects (keda.sh/v1alpha1) are served and
//! validated against KEDA's own schema, so the examples that use them are checked by the API
//! server.

use celld_testkit::TestEnv;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

use crate::TestResult;

fn scaled_object(name: &str, triggers: Option<Value>) -> DynamicObject {
    let mut spec = json!({
        "scaleTargetRef": {"apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet", "name": "web"},
        "minReplicaCount": 2,
        "maxReplicaCount": 8,
    });
    if let Some(triggers) = triggers {
        spec["triggers"] = triggers;
    }
    serde_json::from_value(json!({
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("a ScaledObject")
}

#[tokio::test]
async fn scaled_objects_are_served_and_validated() -> TestResult {
    let env = TestEnv::new("keda").await?;
    let gvk = GroupVersionKind::gvk("keda.sh", "v1alpha1", "ScaledObject");
    let objects: Api<DynamicObject> = Api::namespaced_with(
        env.client(),
        env.namespace(),
        &ApiResource::from_gvk_with_plural(&gvk, "scaledobjects"),
    );

    let trigger = json!([{
        "type": "prometheus",
        "metadata": {"serverAddress": "http://prometheus:9090", "query": "vector(1)", "threshold": "1"},
    }]);
    objects
        .create(&PostParams::default(), &scaled_object("web", Some(trigger)))
        .await?;
    let stored = objects.get("web").await?;
    assert_eq!(stored.data["spec"]["scaleTargetRef"]["kind"], "CelldFleet");

    let invalid = objects
        .create(&PostParams::default(), &scaled_object("bad", None))
        .await
        .expect_err("a ScaledObject without triggers must be refused");
    assert!(
        matches!(&invalid, kube::Error::Api(s) if s.code == 422),
        "{invalid:?}"
    );
    env.cleanup().await?;
    Ok(())
}
