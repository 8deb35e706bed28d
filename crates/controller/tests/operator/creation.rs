//! A fleet from creation to Ready, with every child.

use crate::support::*;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::ResourceExt;
use serde_json::json;

#[tokio::test]
async fn fleet_reaches_ready_with_every_child() {
    let (env, op) = env_with_operator("ready").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "ready");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000a1").await;
    let fleet = inline_fleet(
        "web",
        &s3,
        &prefix,
        json!({
            "ingress": {"hostname": "web.example.com", "ingressClass": "nginx", "path": "/api", "stripPrefix": true, "tls": {"clusterIssuer": "letsencrypt"}},
            "durability": "bucket",
        }),
    ).expect("a valid CelldFleet");
    apply_fleet(&env, &fleet).await;

    let fleet = wait_condition(&env, "web", "Ready", "True", Some("Serving")).await;
    let status = fleet.status.expect("status");
    assert_eq!(status.ready_replicas, 2);
    assert_eq!(status.url.as_deref(), Some("https://web.example.com/api"));
    assert_eq!(
        status.deployment.expect("deployment").version,
        "00000000000000a1"
    );
    let storage = status.storage.expect("storage");
    assert_eq!(storage.bucket, format!("s3://{}/{prefix}", s3.bucket));
    assert_eq!(storage.credentials_secret.as_deref(), Some("creds"));
    assert_eq!(status.observed_generation, fleet.metadata.generation);

    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet");
    assert_eq!(
        sts_env(&sts, "CELLD_BUCKET").as_deref(),
        Some(storage.bucket.as_str())
    );
    assert_eq!(
        sts_env(&sts, "S3_ENDPOINT").as_deref(),
        Some(s3.endpoint.as_str())
    );
    assert_eq!(sts_env(&sts, "CELLD_DURABILITY").as_deref(), Some("bucket"));
    assert_eq!(
        sts_env(&sts, "CELLD_ADVERTISE").as_deref(),
        Some("$(POD_NAME).web-peer.$(POD_NAMESPACE).svc:8081")
    );
    assert_eq!(sts.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(sts.owner_references()[0].name, "web");

    let svc = env.api::<Service>().get("web").await.expect("Service");
    let port = &svc
        .spec
        .as_ref()
        .and_then(|s| s.ports.clone())
        .expect("ports")[0];
    assert_eq!(
        (port.port, port.target_port.clone()),
        (
            80,
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8080))
        )
    );
    let peer = env
        .api::<Service>()
        .get("web-peer")
        .await
        .expect("peer Service");
    assert_eq!(
        peer.spec
            .as_ref()
            .and_then(|s| s.cluster_ip.clone())
            .as_deref(),
        Some("None")
    );
    let ingress = env.api::<Ingress>().get("web").await.expect("Ingress");
    assert_eq!(
        ingress
            .annotations()
            .get("cert-manager.io/cluster-issuer")
            .map(String::as_str),
        Some("letsencrypt")
    );
    let policy = env
        .api::<NetworkPolicy>()
        .get("web")
        .await
        .expect("NetworkPolicy");
    let internal = celld_api::contract::INTERNAL_PORT;
    let admitted: Vec<serde_json::Value> = policy
        .spec
        .and_then(|s| s.ingress)
        .unwrap_or_default()
        .into_iter()
        .filter(|rule| {
            rule.ports.iter().flatten().any(|p| {
                p.port
                    == Some(
                        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(internal),
                    )
            })
        })
        .flat_map(|rule| rule.from.unwrap_or_default())
        .map(|peer| serde_json::to_value(peer).expect("peer serializes"))
        .collect();
    assert_eq!(
        admitted,
        vec![
            json!({"podSelector": {"matchLabels": {"platform.celld.dev/fleet": "web"}}}),
            json!({
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "celld-system"}},
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "celld-operator"}},
            }),
        ],
        "the internal port admits the fleet's pods and the operator's, nothing else"
    );
    assert_eq!(
        crate::object_store_support::metadata_egress(&env, "web")
            .await
            .1,
        crate::object_store_support::METADATA_BLOCKED
            .map(String::from)
            .to_vec(),
        "nodes with keys reach everything but the cloud metadata endpoints"
    );
    env.api::<PodDisruptionBudget>()
        .get("web")
        .await
        .expect("PodDisruptionBudget (replicas 2)");

    // Creating a fleet's children is not worth an Event each (Ready says when it serves); a
    // change of them is.
    assert!(
        !has_event(&env, "web", "Applied", Some("Normal")).await,
        "no Applied event for a fleet's first children"
    );
    let larger = inline_fleet(
        "web",
        &s3,
        &prefix,
        json!({
            "ingress": {"hostname": "web.example.com", "ingressClass": "nginx", "path": "/api", "stripPrefix": true, "tls": {"clusterIssuer": "letsencrypt"}},
            "durability": "bucket",
            "replicas": 3,
        }),
    )
    .expect("a valid CelldFleet");
    apply_fleet(&env, &larger).await;
    wait_events(&env, "web", "Normal", "Applied").await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
