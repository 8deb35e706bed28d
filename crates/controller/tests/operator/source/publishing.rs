//! A declared image is published once, then each new revision.

use super::harness::*;
use crate::support::*;
use celld_api::CelldFleet;
use celld_api::contract::publish;
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_declared_image_is_published_once_then_each_new_revision() {
    let mut t = sourced("source-publish", json!({"image": {"reference": REF1}})).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Publishing")).await;
    assert!(message(&fleet, "SourceSynced").contains(REF1));
    let reconciling = condition(&t.env, "web", "Reconciling").await;
    assert_eq!(reconciling.status, "True", "{reconciling:?}");
    assert_eq!(condition(&t.env, "web", "Stalled").await.status, "False");
    assert_eq!(
        replicas(&t.env).await,
        0,
        "no node before the first publish"
    );

    let (job, pod) = attempt_pod(&t.env, 1).await;
    // An operator restart while the Job runs starts no second one.
    if let Some(op) = t.op.take() {
        op.stop().await;
    }
    let mut again = settings(&t.env, "op-2");
    again.node_api_connect_to = Some(t.nodes.address.clone());
    let op = start(operator_client(&t.env).await, again);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        jobs(&t.env).await,
        vec![job.clone()],
        "one Job across the restart"
    );
    let created = t.env.api::<Job>().get(&job).await.expect("the Job");
    let spec = created.spec.clone().expect("spec");
    assert_eq!(spec.active_deadline_seconds, Some(600));
    let pod_spec = spec.template.spec.expect("pod spec");
    assert_eq!(pod_spec.automount_service_account_token, Some(false));
    let command = pod_spec.containers[0].command.clone().expect("command");
    assert_eq!(command[..2], ["sh", "-c"]);
    assert_eq!(command[3], publish::SCRIPT_NAME);
    assert_eq!(command[4..7], ["celld", "deploy", "/src"]);

    publish_in(&t, &pod, V1).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;
    let source = fleet
        .status
        .clone()
        .and_then(|s| s.source)
        .expect("status.source");
    let published = source.last_published.expect("lastPublished");
    assert_eq!(published.revision, REF1);
    assert_eq!(published.version.as_deref(), Some(V1));
    assert_eq!(
        published.digest.as_deref(),
        REF1.split_once('@').map(|(_, d)| d)
    );
    wait_until("2 nodes once published", TIMEOUT, || async {
        match replicas(&t.env).await {
            2 => Check::Done(()),
            n => Check::Pending(format!("{n} replicas")),
        }
    })
    .await
    .expect("the nodes start");

    wait_condition(&t.env, "web", "Ready", "True", Some("Serving")).await;
    assert_eq!(
        jobs(&t.env).await,
        vec![job.clone()],
        "one Job, kept for its logs"
    );

    // At rest, a fleet with a source writes nothing.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (writes, reconciles) = (op.metrics.total_writes(), op.metrics.ok_reconciles());
    wait_until("3 more reconciles at rest", TIMEOUT, || async {
        let n = op.metrics.ok_reconciles();
        if n >= reconciles + 3 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n} reconciles"))
        }
    })
    .await
    .expect("periodic reconciles");
    assert_eq!(
        op.metrics.total_writes(),
        writes,
        "no write at rest:\n{}",
        op.metrics.encode()
    );

    // A new revision: a new Job; once published, the old Job goes and the history keeps it.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"image": {"reference": REF2}}}})),
        )
        .await
        .expect("revision changed");
    let (job2, pod2) = attempt_pod(&t.env, 1).await;
    assert_ne!(job2, job);
    publish_in(&t, &pod2, V2).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;
    let source = fleet.status.and_then(|s| s.source).expect("status.source");
    assert_eq!(
        source.last_published.and_then(|p| p.version).as_deref(),
        Some(V2)
    );
    assert_eq!(source.history[0].version.as_deref(), Some(V1));
    wait_until("the superseded Job deleted", TIMEOUT, || async {
        let now = jobs(&t.env).await;
        if now == vec![job2.clone()] {
            Check::Done(())
        } else {
            Check::Pending(format!("{now:?}"))
        }
    })
    .await
    .expect("only the last Job stays");
    op.stop().await;
}
