//! A preview at its TTL loses its fleet and the objects under its prefix only, and an
//! operator replaced during an expiry finishes it once.

use super::harness::*;
use crate::support::*;
use celld_api::{CelldFleet, PreviewPhase};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::networking::v1::Ingress;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use serde_json::json;

#[tokio::test]
async fn a_preview_serves_its_own_fleet_until_its_ttl_then_loses_it_and_its_prefix_only() {
    let (s, _op) = Setup::new("preview-ttl", true).await;
    let ns = s.env.namespace();
    s.fill("pr-1").await;
    s.fill("pr-12").await;
    let created = create(
        &s.env,
        &preview("pr-1", json!({"fleet": "web", "ttl": SHORT_TTL})),
    )
    .await
    .expect("the preview is admitted");

    let ready = wait_phase(&s.env, "pr-1", PreviewPhase::Ready, TIMEOUT).await;
    let status = ready.status.clone().expect("status");
    assert_eq!(
        status.url.as_deref(),
        Some("http://pr-1.preview.example.com/")
    );
    assert_eq!(status.version.as_deref(), Some(V1));
    assert_eq!(status.fleet.as_deref(), Some("pr-1"));
    let bucket = format!("s3://{}/{}", s.s3.bucket, s.preview_prefix("pr-1"));
    assert_eq!(status.bucket.as_deref(), Some(bucket.as_str()));
    let expires = status.expires_at.expect("expiresAt").0;
    let born = created
        .metadata
        .creation_timestamp
        .clone()
        .expect("created")
        .0;
    assert_eq!(expires.duration_since(born).as_secs(), 60);

    let fleet = s
        .env
        .api::<CelldFleet>()
        .get("pr-1")
        .await
        .expect("the preview's fleet");
    assert_eq!(fleet.spec.object_storage.bucket, bucket);
    assert_eq!(fleet.spec.replicas, 1);
    assert_eq!(
        fleet.spec.ingress.as_ref().map(|i| i.hostname.as_str()),
        Some("pr-1.preview.example.com")
    );
    assert_eq!(
        fleet
            .labels()
            .get("platform.celld.dev/preview-of")
            .map(String::as_str),
        Some("web")
    );
    let owner = fleet.owner_references().first().cloned().expect("an owner");
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        (
            "CelldPreview",
            created.uid().unwrap_or_default().as_str(),
            Some(true)
        )
    );
    let ingress = s
        .env
        .api::<Ingress>()
        .get("pr-1")
        .await
        .expect("the preview's Ingress");
    let host = ingress
        .spec
        .and_then(|sp| sp.rules)
        .and_then(|r| r.first().and_then(|r| r.host.clone()));
    assert_eq!(host.as_deref(), Some("pr-1.preview.example.com"));
    wait_events(&s.env, "pr-1", "Normal", "Serving").await;

    let expired = wait_phase(&s.env, "pr-1", PreviewPhase::Expired, EXPIRY).await;
    let removed = preview_condition(&expired, "DataRemoved");
    assert_eq!(
        (removed.status.as_str(), removed.reason.as_str()),
        ("True", "DataRemoved"),
        "{removed:?}"
    );
    assert!(
        removed.message.contains("deleted 4 object(s)"),
        "{}",
        removed.message
    );
    assert!(
        expired
            .status
            .as_ref()
            .and_then(|st| st.expired_at.as_ref())
            .is_some()
    );
    wait_gone(&s.env.api::<CelldFleet>(), "pr-1", "CelldFleet").await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-1")).await,
        Vec::<String>::new(),
        "the preview's prefix is emptied"
    );
    assert_eq!(
        s.keys(&s.preview_prefix("pr-12")).await.len(),
        3,
        "the neighbour prefix pr-12 survives"
    );
    assert!(
        !s.keys(&s.prefix).await.is_empty(),
        "the previewed fleet's prefix survives"
    );
    assert_eq!(
        wait_events(&s.env, "pr-1", "Normal", "Expired").await.len(),
        1
    );
    assert_eq!(
        s.env
            .api::<CelldFleet>()
            .get("web")
            .await
            .expect("web stays")
            .spec
            .replicas,
        2
    );
    let _ = (ns, &s.nodes);
}

#[tokio::test]
async fn an_operator_replaced_during_an_expiry_finishes_it_once() {
    let (s, op) = Setup::new("preview-restart", true).await;
    s.fill("pr-5").await;
    s.fill("pr-55").await;
    create(
        &s.env,
        &preview("pr-5", json!({"fleet": "web", "ttl": SHORT_TTL})),
    )
    .await
    .expect("admitted");
    wait_phase(&s.env, "pr-5", PreviewPhase::Ready, TIMEOUT).await;
    // Hold the preview's node in Terminating, so the expiry waits in its middle.
    let pods = s.env.api::<Pod>();
    let hold = json!({"metadata": {"finalizers": ["celld.test/hold"]}});
    pods.patch("pr-5-0", &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .expect("the node's pod held");
    let expiring = wait_phase(&s.env, "pr-5", PreviewPhase::Expiring, EXPIRY).await;
    let waiting = preview_condition(&expiring, "DataRemoved");
    assert!(
        waiting
            .message
            .contains("the nodes of CelldFleet pr-5 to stop"),
        "{}",
        waiting.message
    );
    op.stop().await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-5")).await.len(),
        4,
        "nothing deleted while a node runs (three objects and the claim's marker)"
    );

    let _op2 = start_operator(&s.env, &s.nodes, "op-2").await;
    let release = json!({"metadata": {"finalizers": null}});
    pods.patch("pr-5-0", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .expect("the node's pod released");
    let expired = wait_phase(&s.env, "pr-5", PreviewPhase::Expired, EXPIRY).await;
    assert_eq!(preview_condition(&expired, "DataRemoved").status, "True");
    wait_gone(&s.env.api::<CelldFleet>(), "pr-5", "CelldFleet").await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-5")).await,
        Vec::<String>::new()
    );
    assert_eq!(
        s.keys(&s.preview_prefix("pr-55")).await.len(),
        3,
        "the neighbour survives"
    );
    assert_eq!(
        wait_events(&s.env, "pr-5", "Normal", "Expired").await.len(),
        1,
        "expired once"
    );
}
