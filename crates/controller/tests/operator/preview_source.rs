//! A preview whose Worker comes from a declared source (the preview's spec.source): its fleet
//! carries the source, the operator publishes it with a deploy Job into the preview's own
//! prefix, never the previewed fleet's, and the preview is Ready serving the version published;
//! deleting the preview takes the published data with it.

use crate::previews::{Setup, V1, create, preview, previews_api, wait_gone, wait_phase};
use crate::source::attempt_pod_of;
use crate::support::*;
use celld_api::{CelldFleet, PreviewPhase};
use celld_testkit::{Completion, complete_pod};
use kube::api::DeleteParams;
use serde_json::json;

const IMAGE: &str = "registry.invalid/acme/web-worker:1@sha256:1111111111111111111111111111111111111111111111111111111111111111";

#[tokio::test]
async fn a_preview_with_a_declared_source_publishes_it_into_its_own_prefix() {
    let (s, _op) = Setup::new("preview-source", true).await;
    let parent_pointer = s.keys(&s.prefix).await;
    create(
        &s.env,
        &preview(
            "pr-5",
            json!({"fleet": "web", "source": {"image": {"reference": IMAGE}}}),
        ),
    )
    .await
    .expect("admitted");

    // The preview's fleet carries the source, and its deploy Job runs.
    let (job, pod) = attempt_pod_of(&s.env, "pr-5", 1).await;
    let fleet = s
        .env
        .api::<CelldFleet>()
        .get("pr-5")
        .await
        .expect("its fleet");
    let source = fleet.spec.source.as_ref().expect("the fleet's spec.source");
    assert_eq!(
        source.image.as_ref().map(|i| i.reference.as_str()),
        Some(IMAGE)
    );
    assert!(job.starts_with("pr-5-src-"), "{job}");
    assert!(
        fleet
            .spec
            .object_storage
            .bucket
            .ends_with(&s.preview_prefix("pr-5")),
        "{}",
        fleet.spec.object_storage.bucket
    );

    // The deploy publishes into the preview's prefix: the preview is Ready with that version.
    let own = s.preview_prefix("pr-5");
    publish_pointer(&s.s3, &own, V1).await;
    complete_pod(
        &s.env.api(),
        &pod,
        &Completion::succeeded().with_termination_message(r#"{"outcome":"Published"}"#),
    )
    .await
    .expect("the deploy pod completed");
    let ready = wait_phase(&s.env, "pr-5", PreviewPhase::Ready, TIMEOUT).await;
    assert_eq!(
        ready.status.as_ref().and_then(|st| st.version.as_deref()),
        Some(V1)
    );
    assert_eq!(
        s.keys(&s.prefix).await,
        parent_pointer,
        "the previewed fleet's prefix is untouched"
    );

    // Deleted, the preview takes its fleet and its published data with it.
    previews_api(&s.env)
        .delete("pr-5", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(&previews_api(&s.env), "pr-5", "CelldPreview").await;
    wait_gone(&s.env.api::<CelldFleet>(), "pr-5", "CelldFleet").await;
    assert_eq!(s.keys(&own).await, Vec::<String>::new());
}
