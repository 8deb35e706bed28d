//! A fleet from creation to Ready, holding at zero nodes without a deployment, writing nothing
//! when nothing changed, and deletion cascading to every child.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{Check, wait_for_deletion, wait_for_object, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{DeleteParams, ListParams};
use kube::{Api, ResourceExt};
use serde_json::json;
use std::time::Duration;

fn env_value(sts: &StatefulSet, name: &str) -> Option<String> {
    sts.spec.as_ref()?.template.spec.as_ref()?.containers[0]
        .env
        .as_ref()?
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.value.clone())
}

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
        env_value(&sts, "CELLD_BUCKET").as_deref(),
        Some(storage.bucket.as_str())
    );
    assert_eq!(
        env_value(&sts, "S3_ENDPOINT").as_deref(),
        Some(s3.endpoint.as_str())
    );
    assert_eq!(
        env_value(&sts, "CELLD_DURABILITY").as_deref(),
        Some("bucket")
    );
    assert_eq!(
        env_value(&sts, "CELLD_ADVERTISE").as_deref(),
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
    env.api::<PodDisruptionBudget>()
        .get("web")
        .await
        .expect("PodDisruptionBudget (replicas 2)");

    assert!(
        has_event(&env, "web", "Applied", Some("Normal")).await,
        "an Applied event on the fleet"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

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

#[tokio::test]
async fn reconciles_that_change_nothing_read_and_write_nothing() {
    let (env, op) = env_with_operator("noop").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "noop");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000c1").await;
    apply_fleet(
        &env,
        &inline_fleet(
            "quiet",
            &s3,
            &prefix,
            json!({
                "ingress": {"hostname": "quiet.example.com", "ingressClass": "nginx"},
                "resources": {"requests": {"cpu": "1000m", "memory": "1024Mi"}},
                "localStorage": {"type": "Persistent", "size": "1Gi"},
            }),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "quiet", "Ready", "True", None).await;
    // Let the last status and events settle.
    tokio::time::sleep(Duration::from_secs(3)).await;

    async fn versions(env: &celld_testkit::TestEnv) -> Vec<(String, String)> {
        let mut v = vec![
            (
                "CelldFleet".to_string(),
                env.api::<CelldFleet>()
                    .get("quiet")
                    .await
                    .expect("fleet")
                    .resource_version()
                    .unwrap_or_default(),
            ),
            (
                "StatefulSet".to_string(),
                env.api::<StatefulSet>()
                    .get("quiet")
                    .await
                    .expect("sts")
                    .resource_version()
                    .unwrap_or_default(),
            ),
            (
                "Ingress".to_string(),
                env.api::<Ingress>()
                    .get("quiet")
                    .await
                    .expect("ing")
                    .resource_version()
                    .unwrap_or_default(),
            ),
            (
                "NetworkPolicy".to_string(),
                env.api::<NetworkPolicy>()
                    .get("quiet")
                    .await
                    .expect("np")
                    .resource_version()
                    .unwrap_or_default(),
            ),
        ];
        for svc in ["quiet", "quiet-peer"] {
            v.push((
                format!("Service/{svc}"),
                env.api::<Service>()
                    .get(svc)
                    .await
                    .expect("svc")
                    .resource_version()
                    .unwrap_or_default(),
            ));
        }
        v
    }
    let before = versions(&env).await;
    let writes_before = op.metrics.total_writes();
    let reads_before = op.metrics.total_reads();
    let reconciles_before = op.metrics.ok_reconciles();
    let unchanged_before = op.metrics.unchanged_reconciles();
    wait_until("at least 3 more reconciles", TIMEOUT, || async {
        let n = op.metrics.ok_reconciles();
        if n >= reconciles_before + 3 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n} reconciles"))
        }
    })
    .await
    .expect("periodic reconciles happen");
    assert_eq!(versions(&env).await, before, "no object changed");
    assert_eq!(
        op.metrics.total_writes(),
        writes_before,
        "no write was sent:\n{}",
        op.metrics.encode()
    );
    assert_eq!(
        op.metrics.total_reads(),
        reads_before,
        "a reconcile at rest reads its inputs from the caches, not the API server:\n{}",
        op.metrics.encode()
    );
    let unchanged = op.metrics.unchanged_reconciles() - unchanged_before;
    assert!(
        unchanged >= 2,
        "periodic reconciles at rest find their inputs unchanged and plan nothing ({unchanged} did):\n{}",
        op.metrics.encode()
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

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
