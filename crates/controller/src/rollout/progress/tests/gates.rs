//! Gates that fail a fleet or a wave, and what follows: a refusal, a new Degraded reason, the
//! progress deadline, a publish failed for good, a node restart during the bake, a webhook; the
//! rollback or the halt.

use super::*;

#[test]
fn a_node_refusing_the_version_halts_and_points_every_moved_fleet_back() {
    let r = rollout(json!([{"fleets": 2, "bake": "0s"}, {}]), json!({}));
    let mut w = World::new(r, &["a", "b", "c"]);
    let s1 = w.step(None, at(0));
    w.serve("a");
    let mut b = fleet("b", "0000000000000002", true);
    let status = b.status.as_mut().unwrap();
    status.nodes = vec![
        serde_json::from_value(
            json!({"name": "b-0", "adoption": "Refused", "message": "422: SyntaxError"}),
        )
        .unwrap(),
    ];
    w.fleets.insert("b".into(), b);
    let s2 = w.step(Some(&s1), at(10));
    assert_eq!(s2.phase, RolloutPhase::Halted);
    assert_eq!(s2.waves[0].phase, WavePhase::Failed);
    assert!(
        s2.waves[0]
            .message
            .as_deref()
            .unwrap()
            .contains("VersionRefused: CelldFleet b: nodes refused the version")
            && s2.waves[0]
                .message
                .as_deref()
                .unwrap()
                .contains("422: SyntaxError"),
        "{:?}",
        s2.waves[0].message
    );
    assert_eq!(fleet_phase(&s2, "a"), FleetPhase::RollingBack);
    assert_eq!(fleet_phase(&s2, "b"), FleetPhase::RollingBack);
    assert_eq!(s2.waves[1].phase, WavePhase::Pending, "no further wave");
    assert_eq!(condition(&s2, "Stalled").as_deref(), Some("True Halted"));

    w.pointed_back
        .insert("a".into(), PointedBack::Done("pointed back".into()));
    let s3 = w.step(Some(&s2), at(20));
    assert_eq!(fleet_phase(&s3, "a"), FleetPhase::RolledBack);
    assert_eq!(
        s3.phase,
        RolloutPhase::Halted,
        "b is still being pointed back"
    );
    w.pointed_back
        .insert("b".into(), PointedBack::Skipped("another writer".into()));
    let s4 = w.step(Some(&s3), at(30));
    assert_eq!(s4.phase, RolloutPhase::RolledBack);
    let b = &s4.waves[0].fleets[1];
    assert_eq!(b.reason.as_deref(), Some("RollbackSkipped"));
    assert_eq!(
        condition(&s4, "Stalled").as_deref(),
        Some("True RolledBack")
    );
}

#[test]
fn halt_policy_keeps_the_moved_fleets_on_the_new_version() {
    let r = rollout(json!([{"fleets": 1}, {}]), json!({"onFailure": "Halt"}));
    let mut w = World::new(r, &["a", "b"]);
    let s1 = w.step(None, at(0));
    w.fleets.insert(
        "a".into(),
        with_condition(
            fleet("a", "0000000000000002", true),
            "Degraded",
            "BucketUnreadable",
        ),
    );
    let s2 = w.step(Some(&s1), at(10));
    assert_eq!(s2.phase, RolloutPhase::Halted);
    assert_eq!(fleet_phase(&s2, "a"), FleetPhase::Failed);
    assert_eq!(
        s2.waves[0].fleets[0].reason.as_deref(),
        Some("NewDegradedReason")
    );
    assert!(!s2.phase.ended() || s2.phase == RolloutPhase::Halted);
}

#[test]
fn a_degraded_reason_the_fleet_already_had_does_not_fail_it() {
    let r = rollout(json!([{}]), json!({}));
    let mut w = World::new(r, &["a"]);
    w.fleets.insert(
        "a".into(),
        with_condition(
            fleet("a", "0000000000000001", false),
            "Degraded",
            "RepeatedFences",
        ),
    );
    let s1 = w.step(None, at(0));
    assert_eq!(
        s1.waves[0].fleets[0].degraded_before.as_deref(),
        Some("RepeatedFences")
    );
    w.fleets.insert(
        "a".into(),
        with_condition(
            fleet("a", "0000000000000002", true),
            "Degraded",
            "RepeatedFences",
        ),
    );
    let s2 = w.step(Some(&s1), at(10));
    assert_eq!(fleet_phase(&s2, "a"), FleetPhase::Adopted);
}

#[test]
fn webhooks_are_asked_after_the_bake_and_a_rejection_fails_the_wave() {
    let r = rollout(
        json!([{"bake": "0s"}]),
        json!({"gates": {"webhooks": [{"name": "smoke", "url": "http://gate.t.svc/check"}]}}),
    );
    let mut w = World::new(r, &["a"]);
    let s1 = w.step(None, at(0));
    w.serve("a");
    let s2 = w.step(Some(&s1), at(1));
    assert_eq!(s2.waves[0].phase, WavePhase::Checking);
    assert_eq!(s2.phase, RolloutPhase::Progressing);
    let answer = |passed| Checked {
        wave: 1,
        results: vec![GateResult {
            name: "smoke".into(),
            passed,
            attempts: 3,
            message: Some("HTTP 500 Internal Server Error: boom".into()),
            at: Time(at(2)),
        }],
    };
    w.checked = Some(answer(true));
    let passed = w.step(Some(&s2), at(2));
    assert_eq!(passed.phase, RolloutPhase::Succeeded);
    let mut once = answer(false);
    once.results[0].attempts = 1;
    w.checked = Some(once);
    let again = w.step(Some(&s2), at(2));
    assert_eq!(
        again.waves[0].phase,
        WavePhase::Checking,
        "a failed call with retries left is made again later"
    );
    assert_eq!(again.waves[0].gates[0].attempts, 1);
    w.checked = Some(answer(false));
    let failed = w.step(Some(&again), at(12));
    assert_eq!(failed.waves[0].phase, WavePhase::Failed);
    assert!(
        failed.waves[0].message.as_deref().unwrap().contains(
            "WebhookRejected: webhook smoke did not pass the wave after 3 calls: HTTP 500"
        ),
        "{:?}",
        failed.waves[0].message
    );
    assert_eq!(fleet_phase(&failed, "a"), FleetPhase::RollingBack);
}

#[test]
fn a_fleet_past_the_progress_deadline_fails_its_wave() {
    let r = rollout(json!([{}]), json!({"gates": {"progressDeadline": "1m"}}));
    let w = World::new(r, &["a"]);
    let s1 = w.step(None, at(0));
    let s2 = w.step(Some(&s1), at(61));
    assert_eq!(s2.waves[0].phase, WavePhase::Failed);
    assert_eq!(
        s2.waves[0].fleets[0].reason.as_deref(),
        Some("ProgressDeadlineExceeded")
    );
}

#[test]
fn a_publish_that_fails_for_good_fails_the_fleet() {
    let r = rollout(json!([{}]), json!({}));
    let mut w = World::new(r, &["a"]);
    let s1 = w.step(None, at(0));
    let mut a = fleet("a", "0000000000000001", false);
    a.status.as_mut().unwrap().source = Some(Box::new(serde_json::from_value(json!({
        "rollout": "web",
        "lastAttempted": {"revision": REVISION, "job": "a-src-1", "attempt": 3, "failures": 3,
            "phase": "Failed", "message": "celld deploy exited 1", "startedAt": "t", "key": "k"},
    })).unwrap()));
    w.fleets.insert("a".into(), a);
    let s2 = w.step(Some(&s1), at(5));
    assert_eq!(
        s2.waves[0].fleets[0].reason.as_deref(),
        Some("PublishFailed")
    );
    assert!(
        s2.waves[0].fleets[0]
            .message
            .as_deref()
            .unwrap()
            .contains("celld deploy exited 1")
    );
}

#[test]
fn a_node_restarting_during_the_bake_fails_its_fleet() {
    let r = rollout(json!([{"bake": "1h"}]), json!({}));
    let mut w = World::new(r, &["a"]);
    let s1 = w.step(None, at(0));
    w.serve("a");
    let s2 = w.step(Some(&s1), at(10));
    assert_eq!(s2.waves[0].phase, WavePhase::Baking);
    // A restart from before the wave started does not count.
    let mut a = fleet("a", "0000000000000002", true);
    a.status.as_mut().unwrap().nodes = vec![
        serde_json::from_value(json!({
            "name": "a-0", "adoption": "Adopted",
            "lastRestart": {"at": at(-60).to_string(), "exitCode": 137},
        }))
        .unwrap(),
    ];
    w.fleets.insert("a".into(), a.clone());
    assert_eq!(w.step(Some(&s2), at(20)).waves[0].phase, WavePhase::Baking);
    a.status.as_mut().unwrap().nodes[0].last_restart = Some(celld_api::NodeRestart {
        at: Time(at(30)),
        exit_code: 3,
    });
    w.fleets.insert("a".into(), a);
    let s3 = w.step(Some(&s2), at(40));
    assert_eq!(s3.waves[0].phase, WavePhase::Failed);
    let entry = &s3.waves[0].fleets[0];
    assert_eq!(entry.reason.as_deref(), Some("NodeRestarted"));
    assert!(
        entry.message.as_deref().unwrap().contains("a-0 at")
            && entry.message.as_deref().unwrap().contains("fenced itself"),
        "{:?}",
        entry.message
    );
}
