//! Waves one after the other: one fleet first, the rest once it serves the revision and baked.

use super::harness::*;
use crate::support::*;
use celld_api::CelldFleet;
use celld_api::rollout::{FleetPhase, RolloutPhase, WavePhase};
use serde_json::json;

#[tokio::test]
async fn a_rollout_ships_one_fleet_then_the_rest_once_it_serves_and_baked() {
    let t = ring("rollout-waves", &["a", "b", "c"]).await;
    apply_rollout(
        &t.env,
        "web",
        json!({"waves": [{"fleets": 1, "bake": "3s"}, {"fleets": "100%", "bake": "0s"}]}),
        json!({}),
    )
    .await;
    let r = wait_publishing(&t.env, &["a"]).await;
    assert_eq!(wave_fleets(&r, 1), ["a"]);
    let status = r.status.clone().expect("status");
    assert_eq!(
        status.target.as_ref().map(|t| t.revision.as_str()),
        Some(REF)
    );
    assert_eq!(status.wave.as_deref(), Some("1/2"));
    assert_eq!(status.waves[0].fleets[0].from.as_deref(), Some(V1));

    play_publish(&t, "a", V2).await;
    let r = wait_wave(&t.env, 1, WavePhase::Baking).await;
    assert_eq!(fleet_phase(&r, "a"), Some(FleetPhase::Adopted));
    assert!(
        jobs_of(&t.env, "b").await.is_empty() && jobs_of(&t.env, "c").await.is_empty(),
        "nothing published beyond wave 1 while it bakes"
    );
    let fleet = t.env.api::<CelldFleet>().get("a").await.expect("fleet a");
    let source = fleet
        .status
        .and_then(|s| s.source)
        .expect("a's status.source");
    assert_eq!(source.rollout.as_deref(), Some("web"));
    assert_eq!(
        source.last_published.and_then(|p| p.version).as_deref(),
        Some(V2)
    );

    let r = wait_publishing(&t.env, &["b", "c"]).await;
    let status = r.status.expect("status");
    assert_eq!(status.waves[0].phase, WavePhase::Passed);
    assert!(
        status.waves[1].started_at >= status.waves[0].bake_until,
        "after the bake"
    );
    play_publish(&t, "b", V2).await;
    play_publish(&t, "c", V2).await;
    let r = wait_rollout(&t.env, "web", "Succeeded", |r| {
        phase(r) == Some(RolloutPhase::Succeeded)
    })
    .await;
    let status = r.status.expect("status");
    assert_eq!(status.moved.as_deref(), Some("3/3"));
    let ready = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Succeeded")
    );
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.type_ != "Stalled" && c.type_ != "Reconciling")
    );
    for fleet in ["a", "b", "c"] {
        assert_eq!(pointer(&t, fleet).await, V2);
        assert_eq!(
            jobs_of(&t.env, fleet).await.len(),
            1,
            "one publish for {fleet}"
        );
    }
    wait_events(&t.env, "web", "Normal", "Succeeded").await;
    assert_eq!(
        events(&t.env, "web", "Normal", "WaveStarted").await.len(),
        2,
        "one Event per wave start"
    );
    assert_eq!(events(&t.env, "web", "Normal", "WavePassed").await.len(), 2);
}

#[tokio::test]
async fn a_new_revision_supersedes_the_one_under_way_from_the_first_wave() {
    let t = ring("rollout-supersede", &["a", "b"]).await;
    apply_rollout(
        &t.env,
        "web",
        json!({"waves": [{"fleets": 1, "bake": "1h"}, {}]}),
        json!({}),
    )
    .await;
    wait_publishing(&t.env, &["a"]).await;
    play_publish(&t, "a", V2).await;
    wait_wave(&t.env, 1, WavePhase::Baking).await;
    const REF3: &str = "registry.invalid/acme/web-worker:3@sha256:3333333333333333333333333333333333333333333333333333333333333333";
    const V3: &str = "00000000000000d3";
    apply_rollout(
        &t.env,
        "web",
        json!({"source": {"image": {"reference": REF3}}, "waves": [{"fleets": 1, "bake": "1h"}, {}]}),
        json!({}),
    )
    .await;
    let r = wait_rollout(&t.env, "web", "the new revision in wave 1", |r| {
        r.status.as_ref().is_some_and(|s| {
            s.target.as_ref().is_some_and(|t| t.revision == REF3)
                && s.waves[0].fleets.first().is_some_and(|f| {
                    f.phase == FleetPhase::Publishing && f.from.as_deref() == Some(V2)
                })
        })
    })
    .await;
    assert!(wave_fleets(&r, 2).is_empty(), "wave 2 not started");
    wait_events(&t.env, "web", "Normal", "Superseded").await;
    play_publish(&t, "a", V3).await;
    wait_rollout(&t.env, "web", "a serves the new revision", |r| {
        fleet_phase(r, "a") == Some(FleetPhase::Adopted)
    })
    .await;
    assert_eq!(pointer(&t, "a").await, V3);
    assert_eq!(
        pointer(&t, "b").await,
        V1,
        "b not reached by either revision"
    );
    assert!(jobs_of(&t.env, "b").await.is_empty());
}
