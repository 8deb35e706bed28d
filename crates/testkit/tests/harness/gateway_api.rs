//! The Gateway API standard CRDs are installed: HTTPRoutes (gateway.networking.k8s.io/v1) are
//! served and validated.

use celld_testkit::TestEnv;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, PostParams};
use kube::core::GroupVersionKind;

use crate::TestResult;

fn http_route(name: &str, hostname: &str) -> DynamicObject {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": { "name": name },
        "spec": {
            "parentRefs": [{ "name": "gateway" }],
            "hostnames": [hostname],
            "rules": [{
                "matches": [{ "path": { "type": "PathPrefix", "value": "/" } }],
                "backendRefs": [{ "name": "backend", "port": 8080 }],
            }],
        },
    }))
    .expect("valid HTTPRoute")
}

#[tokio::test]
async fn httproutes_are_served_and_validated() -> TestResult {
    let env = TestEnv::new("gateway-api").await?;
    let gvk = GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "HTTPRoute");
    let routes: Api<DynamicObject> = Api::namespaced_with(
        env.client(),
        env.namespace(),
        &ApiResource::from_gvk_with_plural(&gvk, "httproutes"),
    );

    routes
        .create(
            &PostParams::default(),
            &http_route("web", "web.example.test"),
        )
        .await?;
    let stored = routes.get("web").await?;
    assert_eq!(stored.data["spec"]["hostnames"][0], "web.example.test");
    // Defaults from the CRD schema are applied (a sign the real schema is installed).
    assert_eq!(
        stored.data["spec"]["rules"][0]["backendRefs"][0]["weight"],
        1
    );

    let invalid = routes
        .create(
            &PostParams::default(),
            &http_route("bad", "-not a hostname-"),
        )
        .await
        .expect_err("an invalid hostname must be refused");
    assert!(
        matches!(&invalid, kube::Error::Api(s) if s.code == 422),
        "{invalid:?}"
    );
    env.cleanup().await?;
    Ok(())
}
