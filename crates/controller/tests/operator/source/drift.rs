//! Drift is corrected or reported, and a suspended source publishes nothing.

use super::harness::*;
use crate::support::*;
use celld_api::{CelldFleet, labels};
use celld_testkit::{Check, wait_until};
use kube::api::{Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn drift_is_corrected_or_reported_and_a_suspended_source_publishes_nothing() {
    let mut t = sourced("source-drift", json!({"image": {"reference": REF1}})).await;
    let (_, pod) = attempt_pod(&t.env, 1).await;
    publish_in(&t, &pod, V1).await;
    wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;

    // Someone deploys by hand: the operator says so and publishes the source again.
    publish_pointer(&t.s3, &t.prefix, OTHER).await;
    let (_, pod2) = attempt_pod(&t.env, 2).await;
    let warnings = wait_events(&t.env, "web", "Warning", "Drifted").await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let note = warnings[0].message.clone().unwrap_or_default();
    assert!(note.contains(OTHER) && note.contains(V1), "{note}");
    publish_in(&t, &pod2, V1).await;
    wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;

    // A writer that keeps deploying: two more corrections, then the fleet stalls.
    for attempt in [3, 4] {
        publish_pointer(&t.s3, &t.prefix, OTHER).await;
        let (_, pod) = attempt_pod(&t.env, attempt).await;
        publish_in(&t, &pod, V1).await;
        wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;
    }
    publish_pointer(&t.s3, &t.prefix, OTHER).await;
    let fleet = wait_condition(&t.env, "web", "Stalled", "True", Some("ConcurrentWriter")).await;
    assert!(
        message(&fleet, "Stalled").contains("another writer keeps deploying"),
        "{}",
        message(&fleet, "Stalled")
    );
    wait_events(&t.env, "web", "Warning", "ConcurrentWriter").await;

    // Under Report it stays, reported.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"driftPolicy": "Report"}}})),
        )
        .await
        .expect("Report");
    publish_pointer(&t.s3, &t.prefix, OTHER).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Drifted")).await;
    let last = fleet
        .status
        .and_then(|s| s.source)
        .and_then(|s| s.last_attempted)
        .expect("lastAttempted");
    assert_eq!(last.attempt, 4, "no correction under Report");

    // Suspended in git: nothing is published.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"suspend": true}}})),
        )
        .await
        .expect("suspended by spec");
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Suspended")).await;
    assert!(message(&fleet, "SourceSynced").contains("spec.source.suspend is true"));
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"suspend": false}}})),
        )
        .await
        .expect("resumed");
    wait_condition(&t.env, "web", "SourceSynced", "False", Some("Drifted")).await;

    // Suspended (by the annotation git never sets): nothing is published, even a new revision.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"annotations": {labels::SOURCE_SUSPENDED: "hotfix under way"}},
                "spec": {"source": {"image": {"reference": REF2}}},
            })),
        )
        .await
        .expect("suspended");
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Suspended")).await;
    assert!(message(&fleet, "SourceSynced").contains("hotfix under way"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(jobs(&t.env).await.len(), 1, "no Job while suspended");

    // The fleet deleted, the garbage collector deletes its Job.
    t.env
        .api::<CelldFleet>()
        .delete("web", &Default::default())
        .await
        .expect("fleet deleted");
    wait_until("the fleet's Jobs collected", TIMEOUT, || async {
        let left = jobs(&t.env).await;
        if left.is_empty() {
            Check::Done(())
        } else {
            Check::Pending(format!("{left:?}"))
        }
    })
    .await
    .expect("the Jobs go with the fleet");
    if let Some(op) = t.op.take() {
        op.stop().await;
    }
}
