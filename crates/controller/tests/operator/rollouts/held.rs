//! Paused, a rollout starts nothing; a wave needing approval waits for its promotion.

use super::harness::*;
use crate::support::wait_events;
use celld_api::labels;
use celld_api::rollout::{FleetPhase, RolloutPhase, WavePhase};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_paused_rollout_starts_nothing_and_a_manual_wave_waits_for_its_promotion() {
    let t = ring("rollout-held", &["a", "b"]).await;
    apply_rollout(
        &t.env,
        "web",
        json!({"waves": [{"fleets": 1, "bake": "1h"}, {"approval": "Manual", "bake": "0s"}]}),
        json!({labels::ROLLOUT_PAUSED: "release freeze"}),
    )
    .await;
    let r = wait_rollout(&t.env, "web", "Paused", |r| {
        phase(r) == Some(RolloutPhase::Paused)
    })
    .await;
    let reconciling = r
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Reconciling"))
        .expect("Reconciling");
    assert!(
        reconciling.message.contains("release freeze"),
        "{reconciling:?}"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        jobs_of(&t.env, "a").await.is_empty(),
        "nothing published while paused"
    );

    annotate(&t.env, "web", labels::ROLLOUT_PAUSED, None).await;
    wait_publishing(&t.env, &["a"]).await;
    play_publish(&t, "a", V2).await;
    wait_wave(&t.env, 1, WavePhase::Baking).await;
    // Promoting wave 2 ends wave 1's bake; wave 2 then starts without waiting for approval.
    annotate(&t.env, "web", labels::PROMOTE_WAVE, Some("2 at now")).await;
    let r = wait_publishing(&t.env, &["b"]).await;
    assert_eq!(r.status.as_ref().and_then(|s| s.promoted_wave), Some(2));
    play_publish(&t, "b", V2).await;
    wait_rollout(&t.env, "web", "Succeeded", |r| {
        phase(r) == Some(RolloutPhase::Succeeded)
    })
    .await;
}

#[tokio::test]
async fn a_manual_wave_waits_until_promoted_and_an_abort_points_the_moved_fleets_back() {
    let t = ring("rollout-manual", &["a", "b"]).await;
    apply_rollout(
        &t.env,
        "web",
        json!({"waves": [{"fleets": 1, "bake": "0s"}, {"approval": "Manual", "bake": "0s"}]}),
        json!({}),
    )
    .await;
    wait_publishing(&t.env, &["a"]).await;
    play_publish(&t, "a", V2).await;
    let r = wait_rollout(&t.env, "web", "WaitingForPromotion", |r| {
        phase(r) == Some(RolloutPhase::WaitingForPromotion)
    })
    .await;
    assert_eq!(r.status.as_ref().and_then(|s| s.current_wave), Some(2));
    assert!(jobs_of(&t.env, "b").await.is_empty());
    annotate(&t.env, "web", labels::PROMOTE_WAVE, Some("2")).await;
    wait_publishing(&t.env, &["b"]).await;
    // Aborted by hand: the revision stops for good and the fleets moved are pointed back.
    annotate(&t.env, "web", labels::ROLLOUT_ABORT, Some("bad release")).await;
    let r = wait_rollout(&t.env, "web", "aborted, a pointed back", |r| {
        phase(r) == Some(RolloutPhase::Aborted)
            && fleet_phase(r, "a") == Some(FleetPhase::RolledBack)
    })
    .await;
    let stalled = r
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Stalled"))
        .expect("Stalled");
    assert!(stalled.message.contains("bad release"), "{stalled:?}");
    assert_eq!(pointer(&t, "a").await, V1);
    wait_events(&t.env, "web", "Warning", "Aborted").await;
}
