//! A node refusing the version halts the rollout and points every fleet it moved back at the
//! version it served; the fleets of the next wave are never touched. A node restarting during
//! the bake halts it too.

use super::harness::*;
use crate::support::*;
use celld_api::CelldFleet;
use celld_api::rollout::{FleetPhase, RolloutPhase, WavePhase};
use celld_testkit::{Check, restart_containers, wait_until};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

#[tokio::test]
async fn a_node_refusing_the_version_halts_and_points_the_moved_fleets_back() {
    let t = ring("rollout-refusal", &["a", "b", "c"]).await;
    t.nodes
        .refuse("b-0", V2, "Uncaught SyntaxError: Unexpected token");
    apply_rollout(
        &t.env,
        "web",
        json!({"waves": [{"fleets": 2, "bake": "0s"}, {}]}),
        json!({}),
    )
    .await;
    wait_publishing(&t.env, &["a", "b"]).await;
    play_publish(&t, "a", V2).await;
    play_publish(&t, "b", V2).await;
    let r = wait_rollout(&t.env, "web", "rolled back", |r| {
        phase(r) == Some(RolloutPhase::RolledBack)
    })
    .await;
    let status = r.status.clone().expect("status");
    let wave = &status.waves[0];
    assert!(
        wave.message
            .as_deref()
            .is_some_and(|m| m.contains("VersionRefused")
                && m.contains("CelldFleet b")
                && m.contains("Unexpected token")),
        "{:?}",
        wave.message
    );
    assert_eq!(fleet_phase(&r, "a"), Some(FleetPhase::RolledBack));
    assert_eq!(fleet_phase(&r, "b"), Some(FleetPhase::RolledBack));
    assert!(wave_fleets(&r, 2).is_empty(), "no further wave");
    assert_eq!(pointer(&t, "a").await, V1, "a pointed back");
    assert_eq!(pointer(&t, "b").await, V1, "b pointed back");
    assert_eq!(pointer(&t, "c").await, V1, "c never touched");
    assert!(jobs_of(&t.env, "c").await.is_empty());
    let stalled = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Stalled")
        .expect("Stalled");
    assert_eq!(
        (stalled.status.as_str(), stalled.reason.as_str()),
        ("True", "RolledBack")
    );
    wait_events(&t.env, "web", "Warning", "WaveFailed").await;
    wait_events(&t.env, "web", "Warning", "RolledBack").await;
    // The fleets no longer follow the rollout, and serve their old version again.
    let fleets = t.env.api::<CelldFleet>();
    wait_until("a serves V1 again", TIMEOUT, || async {
        let fleet = fleets.get("a").await.expect("fleet a");
        let status = fleet.status.unwrap_or_default();
        let version = status.deployment.map(|d| d.version);
        match (status.source.is_none(), version.as_deref()) {
            (true, Some(V1)) => Check::Done(()),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("a is back on V1");
}

#[tokio::test]
async fn a_node_restarting_during_the_bake_fails_the_wave() {
    let t = ring("rollout-restart-bake", &["a", "b"]).await;
    apply_rollout(
        &t.env,
        "web",
        json!({"waves": [{"fleets": 1, "bake": "1h"}, {}], "onFailure": "Halt"}),
        json!({}),
    )
    .await;
    wait_publishing(&t.env, &["a"]).await;
    play_publish(&t, "a", V2).await;
    wait_wave(&t.env, 1, WavePhase::Baking).await;
    restart_containers(
        &t.env.api::<Pod>(),
        "a-0",
        137,
        k8s_openapi::jiff::Timestamp::now(),
        1,
    )
    .await
    .expect("a-0 restarted");
    let r = wait_rollout(&t.env, "web", "halted", |r| {
        phase(r) == Some(RolloutPhase::Halted)
    })
    .await;
    let a = entry(&r, "a").expect("a listed");
    assert_eq!(a.reason.as_deref(), Some("NodeRestarted"));
    assert!(
        a.message
            .as_deref()
            .is_some_and(|m| m.contains("a-0") && m.contains("exit code 137")),
        "{a:?}"
    );
    assert_eq!(pointer(&t, "a").await, V2, "Halt keeps the new version");
    assert!(jobs_of(&t.env, "b").await.is_empty());
}
