//! A preview deleted before its TTL takes its fleet and its prefix with it.

use super::harness::*;
use crate::support::*;
use celld_api::{CelldFleet, PreviewPhase};
use kube::ResourceExt;
use kube::api::DeleteParams;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_preview_deleted_before_its_ttl_takes_its_fleet_and_prefix_with_it() {
    let (s, _op) = Setup::new("preview-delete", true).await;
    s.fill("pr-4").await;
    s.fill("pr-41").await;
    create(&s.env, &preview("pr-4", json!({"fleet": "web"})))
        .await
        .expect("admitted");
    let ready = wait_phase(&s.env, "pr-4", PreviewPhase::Ready, TIMEOUT).await;
    assert!(
        ready
            .finalizers()
            .iter()
            .any(|f| f == "platform.celld.dev/preview-data")
    );
    // At rest nothing is written: three resyncs later the preview and its fleet are as they were.
    let fleets = s.env.api::<CelldFleet>();
    let before = fleets
        .get("pr-4")
        .await
        .expect("its fleet")
        .resource_version();
    tokio::time::sleep(Duration::from_secs(7)).await;
    let still = previews_api(&s.env).get("pr-4").await.expect("the preview");
    assert_eq!(
        still.resource_version(),
        ready.resource_version(),
        "the preview was rewritten at rest"
    );
    assert_eq!(
        fleets
            .get("pr-4")
            .await
            .expect("its fleet")
            .resource_version(),
        before,
        "its fleet was rewritten at rest"
    );
    previews_api(&s.env)
        .delete("pr-4", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(&previews_api(&s.env), "pr-4", "CelldPreview").await;
    wait_gone(&s.env.api::<CelldFleet>(), "pr-4", "CelldFleet").await;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-4")).await,
        Vec::<String>::new()
    );
    assert_eq!(
        s.keys(&s.preview_prefix("pr-41")).await.len(),
        3,
        "the neighbour survives"
    );
}
