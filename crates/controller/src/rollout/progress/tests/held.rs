//! A rollout held by hand: a manual wave and its promotion, a pause, an abort.

use super::*;

#[test]
fn a_manual_wave_waits_for_its_promotion_and_a_promotion_ends_a_bake() {
    let r = rollout(
        json!([{"fleets": 1, "bake": "1h"}, {"approval": "Manual"}]),
        json!({}),
    );
    let mut w = World::new(r, &["a", "b"]);
    let s1 = w.step(None, at(0));
    w.serve("a");
    let s2 = w.step(Some(&s1), at(10));
    assert_eq!(s2.waves[0].phase, WavePhase::Baking);
    w.promotion = Some("1 at 2026-12-07T17:00:00Z");
    let s3 = w.step(Some(&s2), at(20));
    assert_eq!(
        s3.waves[0].phase,
        WavePhase::Passed,
        "the promotion ended the bake"
    );
    assert_eq!(s3.phase, RolloutPhase::WaitingForPromotion);
    assert_eq!(s3.current_wave, Some(2));
    assert_eq!(
        condition(&s3, "Reconciling").as_deref(),
        Some("True WaitingForPromotion")
    );
    w.promotion = Some("2 at 2026-12-07T17:01:00Z");
    let s4 = w.step(Some(&s3), at(30));
    assert_eq!(s4.waves[1].phase, WavePhase::Publishing);
    assert_eq!(s4.promoted_wave, Some(2));
}

#[test]
fn a_promotion_taken_for_one_revision_promotes_nothing_in_the_next() {
    let r = rollout(json!([{"approval": "Manual"}]), json!({}));
    let mut w = World::new(r, &["a"]);
    w.promotion = Some("1");
    let s1 = w.step(None, at(0));
    assert_eq!(
        s1.phase,
        RolloutPhase::WaitingForPromotion,
        "given before it began"
    );
    w.promotion = Some("1 again");
    let s2 = w.step(Some(&s1), at(1));
    assert_eq!(s2.waves[0].phase, WavePhase::Publishing);
    w.target = Ok(TargetNow {
        revision: "r/w:3".into(),
        digest: None,
        key: "key-3".into(),
    });
    let s3 = w.step(Some(&s2), at(2));
    assert_eq!(s3.target.as_ref().unwrap().key, "key-3");
    assert_eq!(s3.phase, RolloutPhase::WaitingForPromotion);
    assert_eq!(s3.promoted_wave, None);
}

#[test]
fn paused_starts_no_fleet_and_passes_no_wave() {
    let r = rollout(json!([{"fleets": 1, "bake": "0s"}, {}]), json!({}));
    let mut w = World::new(r, &["a", "b"]);
    w.paused = Some("spec.paused");
    let s1 = w.step(None, at(0));
    assert_eq!(s1.phase, RolloutPhase::Paused);
    assert!(s1.waves.iter().all(|w| w.fleets.is_empty()));
    w.paused = None;
    let s2 = w.step(Some(&s1), at(1));
    w.serve("a");
    w.paused = Some("annotation");
    let s3 = w.step(Some(&s2), at(2));
    assert_eq!(s3.waves[0].phase, WavePhase::Baking);
    let s4 = w.step(Some(&s3), at(3));
    assert_eq!(
        s4.waves[0].phase,
        WavePhase::Baking,
        "a paused bake does not pass"
    );
    assert_eq!(s4.phase, RolloutPhase::Paused);
}

#[test]
fn an_abort_stops_the_revision_and_rolls_back() {
    let r = rollout(json!([{"fleets": 1}, {}]), json!({}));
    let mut w = World::new(r, &["a", "b"]);
    let s1 = w.step(None, at(0));
    w.aborted = Some("bad release");
    let s2 = w.step(Some(&s1), at(1));
    assert_eq!(s2.phase, RolloutPhase::Aborted);
    assert_eq!(fleet_phase(&s2, "a"), FleetPhase::RollingBack);
    assert!(
        condition(&s2, "Stalled").is_some_and(|c| c == "True Aborted"),
        "{:?}",
        s2.conditions
    );
    w.pointed_back
        .insert("a".into(), PointedBack::Done("ok".into()));
    let s3 = w.step(Some(&s2), at(2));
    assert_eq!(s3.phase, RolloutPhase::Aborted, "stays aborted");
    assert_eq!(fleet_phase(&s3, "a"), FleetPhase::RolledBack);
}
