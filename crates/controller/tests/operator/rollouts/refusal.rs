//! A node refusing the version halts the rollout and points every fleet it moved back at the
//! version it served; the fleets of the next wave are never touched.

use super::harness::*;
use crate::support::*;
use celld_api::CelldFleet;
use celld_api::rollout::{FleetPhase, RolloutPhase};
use celld_testkit::{Check, wait_until};
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
    wait_rollout(&t.env, "web", "a and b publishing", |r| {
        fleet_phase(r, "a") == Some(FleetPhase::Publishing)
            && fleet_phase(r, "b") == Some(FleetPhase::Publishing)
    })
    .await;
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
