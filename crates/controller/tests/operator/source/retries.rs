//! A failing publish is retried with backoff, then stalls after spec.source.retries.

use super::harness::*;
use crate::support::*;
use celld_api::{CelldFleet, labels};
use celld_testkit::{Check, Completion, complete_pod, hold_pod_waiting, wait_until};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_failing_publish_is_retried_with_backoff_then_stalls() {
    let (env, nodes, op) = env_with_nodes("source-retries", "0.6.0", V1).await;
    op.stop().await;
    let mut fast = settings(&env, "op-2");
    fast.node_api_connect_to = Some(nodes.address.clone());
    fast.publish_backoff = Duration::from_secs(1);
    let op = start(operator_client(&env).await, fast);
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "source-retries");
    celld_fixtures::create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let extra = json!({"image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 1,
        "source": {"image": {"reference": REF1, "layout": "Deployer"}, "retries": 2}});
    apply_fleet(
        &env,
        &celld_fixtures::inline_fleet("web", &s3, &prefix, extra).expect("a CelldFleet"),
    )
    .await;
    let failed = Completion::failed().with_termination_message(
        r#"{"outcome":"Failed","step":"deploy","exitCode":1,"message":"wrangler.jsonc: unknown key \"build\""}"#,
    );
    let (_, pod) = attempt_pod(&env, 1).await;
    // The pod's waiting reason reaches the condition at once.
    hold_pod_waiting(
        &env.api(),
        &pod,
        "ErrImagePull",
        Some("registry.invalid: no such host"),
    )
    .await
    .expect("the pod waits");
    let fleet = wait_until("the waiting reason in SourceSynced", TIMEOUT, || async {
        let c = condition(&env, "web", "SourceSynced").await;
        if c.message.contains("ErrImagePull") {
            Check::Done(c)
        } else {
            Check::Pending(c.message)
        }
    })
    .await
    .expect("the waiting reason shown");
    assert_eq!(fleet.reason, "Publishing");
    env.api::<Pod>()
        .patch(
            &pod,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"testenv.celld.dev/waiting-reason": null}}}),
            ),
        )
        .await
        .expect("the pod runs again");
    wait_until("the pod running again", TIMEOUT, || async {
        match env.api::<Pod>().get(&pod).await {
            Ok(p) if running(Some(&p)) => Check::Done(()),
            other => Check::Pending(format!("{:?}", other.map(|p| p.status))),
        }
    })
    .await
    .expect("running");
    complete_pod(&env.api(), &pod, &failed)
        .await
        .expect("the first attempt fails");
    let (_, pod2) = attempt_pod(&env, 2).await;
    complete_pod(&env.api(), &pod2, &failed)
        .await
        .expect("the second attempt fails");
    let fleet = wait_condition(&env, "web", "Stalled", "True", Some("PublishFailed")).await;
    let synced = message(&fleet, "SourceSynced");
    assert!(synced.contains("failed 2 times"), "{synced}");
    assert!(
        synced.contains("unknown key"),
        "the script's own words: {synced}"
    );
    wait_events(&env, "web", "Warning", "PublishFailed").await;
    assert_eq!(replicas(&env).await, 0, "nothing was ever published");

    // A new revision starts over (a tag this time: the digest comes from the pulled image).
    env.api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"image": {"reference": TAG2}}}})),
        )
        .await
        .expect("a new revision");
    let (_, pod_next) = attempt_pod(&env, 1).await;
    complete_pod(&env.api(), &pod_next, &failed)
        .await
        .expect("the new revision's first attempt fails");
    attempt_pod(&env, 2).await;

    // Asking again starts over too.
    env.api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {labels::RECONCILE_REQUESTED_AT: "2026-12-02T12:00:00Z"}}})),
        )
        .await
        .expect("annotated");
    let (_, pod3) = attempt_pod(&env, 1).await;
    publish_pointer(&s3, &prefix, V1).await;
    complete_pod(
        &env.api(),
        &pod3,
        &Completion::succeeded()
            .with_termination_message(r#"{"outcome":"Published"}"#)
            .with_image_id(format!("registry.invalid/acme/web-worker@{DIGEST2}")),
    )
    .await
    .expect("published");
    let fleet = wait_condition(&env, "web", "SourceSynced", "True", Some("Synced")).await;
    let published = fleet
        .status
        .and_then(|s| s.source)
        .and_then(|s| s.last_published)
        .expect("lastPublished");
    assert_eq!(
        (published.revision.as_str(), published.digest.as_deref()),
        (TAG2, Some(DIGEST2)),
        "the tag and the digest the kubelet pulled"
    );
    op.stop().await;
}
