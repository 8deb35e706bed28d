//! Faults during a rollout: the operator restarted mid-wave resumes where its status says it
//! stood and publishes nothing twice; a fleet deleted mid-wave leaves it; a fleet whose bucket
//! is down fails the gate at the progress deadline and the others are pointed back.

use super::harness::*;
use crate::support::*;
use celld_api::CelldFleet;
use celld_api::rollout::{FleetPhase, RolloutPhase};
use celld_testkit::{Check, wait_until};
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn an_operator_restarted_mid_wave_resumes_and_a_deleted_or_relabelled_fleet_leaves_its_wave()
{
    let mut t = ring("rollout-restart", &["a", "b", "c", "d"]).await;
    apply_rollout(
        &t.env,
        "web",
        json!({"waves": [{"fleets": 1, "bake": "0s"}, {"bake": "0s"}]}),
        json!({}),
    )
    .await;
    wait_publishing(&t.env, &["a"]).await;
    let (job, _) = crate::source::attempt_pod_of(&t.env, "a", 1).await;
    if let Some(op) = t.op.take() {
        op.stop().await;
    }
    t.op = Some(operator(&t.env, &t.nodes, "op-2").await);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        jobs_of(&t.env, "a").await,
        [job],
        "one Job across the restart"
    );
    let r = wait_publishing(&t.env, &["a"]).await;
    assert_eq!(wave_fleets(&r, 1), ["a"]);
    play_publish(&t, "a", V2).await;
    wait_publishing(&t.env, &["b", "c", "d"]).await;
    let fleets = t.env.api::<CelldFleet>();
    fleets
        .delete("c", &DeleteParams::default())
        .await
        .expect("c deleted");
    fleets
        .patch(
            "d",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "batch"}}})),
        )
        .await
        .expect("d relabelled");
    let r = wait_rollout(&t.env, "web", "c and d left", |r| {
        fleet_phase(r, "c") == Some(FleetPhase::Left)
            && fleet_phase(r, "d") == Some(FleetPhase::Left)
    })
    .await;
    assert_eq!(
        entry(&r, "c").and_then(|c| c.reason.as_deref()),
        Some("FleetDeleted")
    );
    assert_eq!(
        entry(&r, "d").and_then(|d| d.reason.as_deref()),
        Some("Unselected")
    );
    // d no longer follows the rollout: its deploy Job goes and its bucket keeps V1.
    wait_until("d's deploy Job deleted", TIMEOUT, || async {
        match jobs_of(&t.env, "d").await {
            jobs if jobs.is_empty() => Check::Done(()),
            jobs => Check::Pending(format!("{jobs:?}")),
        }
    })
    .await
    .expect("d's Job deleted");
    assert_eq!(pointer(&t, "d").await, V1);
    play_publish(&t, "b", V2).await;
    let r = wait_rollout(&t.env, "web", "Succeeded", |r| {
        phase(r) == Some(RolloutPhase::Succeeded)
    })
    .await;
    assert_eq!(r.status.and_then(|s| s.moved).as_deref(), Some("2/2"));
    assert_eq!(jobs_of(&t.env, "a").await.len(), 1, "a published once");
}

/// Moves the fleet `fleet`'s S3 endpoint to `endpoint`.
async fn set_endpoint(t: &Ring, fleet: &str, endpoint: &str) {
    t.env
        .api::<CelldFleet>()
        .patch(
            fleet,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"objectStorage": {"endpoint": endpoint}}})),
        )
        .await
        .expect("the endpoint moved");
}

#[tokio::test]
async fn a_fleet_whose_bucket_is_down_fails_the_gate_and_the_others_are_pointed_back() {
    let t = ring("rollout-bucket-down", &["a", "b", "c"]).await;
    apply_rollout(
        &t.env,
        "web",
        json!({
            "waves": [{"fleets": 2, "bake": "0s"}, {}],
            "gates": {"progressDeadline": "1m"},
        }),
        json!({}),
    )
    .await;
    wait_publishing(&t.env, &["a", "b"]).await;
    // b's bucket goes down: its endpoint answers nothing.
    set_endpoint(&t, "b", "http://127.0.0.1:9").await;
    play_publish(&t, "a", V2).await;
    // a is pointed back; b cannot be reached, so it is tried again until it can.
    let r = wait_rollout(&t.env, "web", "a pointed back, b tried again", |r| {
        fleet_phase(r, "a") == Some(FleetPhase::RolledBack)
            && entry(r, "b").is_some_and(|b| b.reason.as_deref() == Some("RollbackFailed"))
    })
    .await;
    assert_eq!(phase(&r), Some(RolloutPhase::Halted));
    let b = entry(&r, "b").expect("b listed");
    assert!(
        b.message
            .as_deref()
            .is_some_and(|m| m.contains("127.0.0.1:9")),
        "{b:?}"
    );
    let failed = &r.status.as_ref().expect("status").waves[0];
    assert!(
        failed
            .message
            .as_deref()
            .is_some_and(|m| m.contains("CelldFleet b")
                && (m.contains("NewDegradedReason") || m.contains("ProgressDeadlineExceeded"))),
        "{:?}",
        failed.message
    );
    assert_eq!(pointer(&t, "a").await, V1, "a pointed back");
    assert!(
        jobs_of(&t.env, "c").await.is_empty(),
        "the next wave never started"
    );
    // b's bucket is back: its pointer never moved, and the rollout ends rolled back.
    let endpoint = t.s3.endpoint.clone();
    set_endpoint(&t, "b", &endpoint).await;
    let r = wait_rollout(&t.env, "web", "rolled back", |r| {
        phase(r) == Some(RolloutPhase::RolledBack)
    })
    .await;
    assert_eq!(fleet_phase(&r, "b"), Some(FleetPhase::RolledBack));
    assert_eq!(pointer(&t, "b").await, V1);
    wait_events(&t.env, "web", "Warning", "WaveFailed").await;
}
