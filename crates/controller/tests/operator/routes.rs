//! Ingress and HTTPRoute: switching between them, or removing the route, deletes the old one;
//! status.url claims https only when TLS is really configured.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{Check, wait_for_deletion, wait_for_object, wait_until};
use gateway_api::gateways::Gateway;
use gateway_api::httproutes::HttpRoute;
use k8s_openapi::api::networking::v1::Ingress;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

#[tokio::test]
async fn switching_routes_prunes_the_old_one() {
    let (env, op) = env_with_operator("routes").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "routes");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "0000000000000101").await;
    let gateway: Gateway = serde_json::from_value(json!({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "edge"},
        "spec": {"gatewayClassName": "test", "listeners": [
            {"name": "https", "protocol": "HTTPS", "port": 443, "tls": {"certificateRefs": [{"name": "edge-tls"}]}},
        ]},
    }))
    .expect("Gateway");
    env.api::<Gateway>()
        .create(&PostParams::default(), &gateway)
        .await
        .expect("Gateway created");

    apply_fleet(
        &env,
        &inline_fleet(
            "site",
            &s3,
            &prefix,
            json!({"ingress": {"hostname": "site.example.com", "ingressClass": "nginx"}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "site", "Ready", "True", None).await;
    env.api::<Ingress>().get("site").await.expect("Ingress");

    // Ingress -> Gateway: the Ingress goes, an HTTPRoute comes, https because every listener is.
    let mut to_gateway = inline_fleet(
        "site",
        &s3,
        &prefix,
        json!({"ingress": {"hostname": "site.example.com", "gatewayRefs": [{"name": "edge"}], "path": "/shop", "stripPrefix": true}}),
    ).expect("a valid CelldFleet");
    to_gateway.metadata.managed_fields = None;
    apply_fleet(&env, &to_gateway).await;
    wait_for_deletion(&env.api::<Ingress>(), "site", TIMEOUT)
        .await
        .expect("Ingress pruned");
    let route = wait_for_object(
        &env.api::<HttpRoute>(),
        "site",
        "the HTTPRoute",
        TIMEOUT,
        |_| true,
    )
    .await
    .expect("HTTPRoute");
    let rule = &route.spec.rules.as_ref().expect("rules")[0];
    assert!(
        rule.filters
            .as_ref()
            .is_some_and(|f| f[0].url_rewrite.is_some()),
        "stripPrefix rewrites"
    );
    wait_for_object(
        &env.api::<CelldFleet>(),
        "site",
        "an https URL",
        TIMEOUT,
        |f| {
            f.status.as_ref().and_then(|s| s.url.as_deref())
                == Some("https://site.example.com/shop")
        },
    )
    .await
    .expect("url follows the route");

    // Reconciles that change nothing leave the HTTPRoute alone.
    let routes = env.api::<HttpRoute>();
    let version = routes
        .get("site")
        .await
        .expect("HTTPRoute")
        .resource_version();
    let before = op.metrics.ok_reconciles();
    wait_until("3 more reconciles", TIMEOUT, || async {
        let n = op.metrics.ok_reconciles();
        if n >= before + 3 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n}"))
        }
    })
    .await
    .expect("periodic reconciles");
    assert_eq!(
        routes
            .get("site")
            .await
            .expect("HTTPRoute")
            .resource_version(),
        version,
        "the HTTPRoute was rewritten"
    );

    // An HTTP listener on the same Gateway: no longer every listener is TLS.
    let patch = json!({"spec": {"listeners": [
        {"name": "https", "protocol": "HTTPS", "port": 443, "tls": {"certificateRefs": [{"name": "edge-tls"}]}},
        {"name": "http", "protocol": "HTTP", "port": 80},
    ]}});
    env.api::<Gateway>()
        .patch("edge", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("listener added");
    wait_for_object(
        &env.api::<CelldFleet>(),
        "site",
        "an http URL",
        TIMEOUT,
        |f| {
            f.status.as_ref().and_then(|s| s.url.as_deref()) == Some("http://site.example.com/shop")
        },
    )
    .await
    .expect("url says http once a listener is plain");

    // No route at all: the HTTPRoute goes too, the URL is the Service's.
    apply_fleet(
        &env,
        &inline_fleet("site", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;
    wait_for_deletion(&env.api::<HttpRoute>(), "site", TIMEOUT)
        .await
        .expect("HTTPRoute pruned");
    let ns = env.namespace().to_string();
    wait_for_object(
        &env.api::<CelldFleet>(),
        "site",
        "the Service URL",
        TIMEOUT,
        |f| f.status.as_ref().and_then(|s| s.url.clone()) == Some(format!("http://site.{ns}.svc")),
    )
    .await
    .expect("url without a route");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
