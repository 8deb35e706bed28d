//! Waves moving on: one after the other, within the parallelism bound, as fleets leave, over
//! skipped fleets, a source without a revision, and a new revision superseding one under way.

use super::*;

#[test]
fn waves_move_one_after_the_other_through_publish_adoption_and_bake() {
    let r = rollout(
        json!([{"fleets": 1, "bake": "10m"}, {"fleets": "100%", "bake": "0s"}]),
        json!({}),
    );
    let mut w = World::new(r, &["a", "b", "c"]);
    let s1 = w.step(None, at(0));
    assert_eq!(s1.target.as_ref().unwrap().revision, REVISION);
    assert_eq!(s1.phase, RolloutPhase::Progressing);
    assert_eq!(
        phases(&s1),
        [
            (
                1,
                WavePhase::Publishing,
                vec![("a".into(), FleetPhase::Publishing)]
            ),
            (2, WavePhase::Pending, vec![]),
        ]
    );
    let a = &s1.waves[0].fleets[0];
    assert_eq!(a.from.as_deref(), Some("0000000000000001"));
    assert_eq!(a.from_script.as_deref(), Some("w"));
    assert_eq!(s1.wave.as_deref(), Some("1/2"));
    assert_eq!(s1.moved.as_deref(), Some("0/3"));
    assert_eq!(
        condition(&s1, "Reconciling").as_deref(),
        Some("True WaveStarted")
    );

    // Not served yet: nothing moves (once the fleet's wait is said, nothing changes).
    let waiting = w.step(Some(&s1), at(5));
    assert_eq!(
        waiting.waves[0].fleets[0].message.as_deref(),
        Some("waiting for the revision to be published")
    );
    assert_eq!(w.step(Some(&waiting), at(6)), waiting);

    w.serve("a");
    let s2 = w.step(Some(&s1), at(10));
    assert_eq!(s2.waves[0].phase, WavePhase::Baking);
    assert_eq!(
        s2.waves[0].fleets[0].to.as_deref(),
        Some("0000000000000002")
    );
    assert_eq!(s2.waves[0].fleets[0].adopted.as_deref(), Some("2/2"));
    assert_eq!(s2.waves[0].bake_until.as_ref().unwrap().0, at(610));

    let s3 = w.step(Some(&s2), at(300));
    assert_eq!(s3.waves[0].phase, WavePhase::Baking, "still baking");
    let mut early = w.step(
        Some(&s1),
        at(10)
            .checked_add(SignedDuration::from_millis(300))
            .unwrap(),
    );
    assert_eq!(
        early.waves[0].bake_until.take().unwrap().0,
        at(611),
        "a bake's end is written rounded up to the second"
    );
    let s4 = w.step(Some(&s3), at(610));
    assert_eq!(
        phases(&s4)[1],
        (
            2,
            WavePhase::Publishing,
            vec![
                ("b".into(), FleetPhase::Publishing),
                ("c".into(), FleetPhase::Publishing)
            ]
        )
    );
    assert_eq!(s4.waves[0].phase, WavePhase::Passed);
    w.serve("b");
    w.serve("c");
    let s5 = w.step(Some(&s4), at(620));
    assert_eq!(s5.phase, RolloutPhase::Succeeded, "{:?}", phases(&s5));
    assert_eq!(s5.moved.as_deref(), Some("3/3"));
    assert_eq!(condition(&s5, "Ready").as_deref(), Some("True Succeeded"));
    assert_eq!(condition(&s5, "Reconciling"), None);
}

#[test]
fn max_parallel_bounds_the_fleets_publishing_at_once() {
    let r = rollout(json!([{"maxParallel": 2, "bake": "0s"}]), json!({}));
    let mut w = World::new(r, &["a", "b", "c", "d"]);
    let s1 = w.step(None, at(0));
    let publishing = |s: &CelldRolloutStatus| {
        s.waves[0]
            .fleets
            .iter()
            .filter(|f| f.phase == FleetPhase::Publishing)
            .count()
    };
    assert_eq!(publishing(&s1), 2);
    assert_eq!(fleet_phase(&s1, "c"), FleetPhase::Pending);
    w.serve("a");
    let s2 = w.step(Some(&s1), at(1));
    assert_eq!(fleet_phase(&s2, "c"), FleetPhase::Publishing);
    assert_eq!(fleet_phase(&s2, "d"), FleetPhase::Pending);
    assert_eq!(publishing(&s2), 2);
}

#[test]
fn a_deleted_or_relabelled_fleet_leaves_and_its_wave_goes_on() {
    let r = rollout(
        json!([{"bake": "0s"}]),
        json!({"selector": {"matchLabels": {"tier": "web"}}}),
    );
    let mut w = World::new(r, &["a", "b", "c"]);
    for f in w.fleets.values_mut() {
        f.metadata.labels = Some([("tier".to_string(), "web".to_string())].into());
    }
    let s1 = w.step(None, at(0));
    assert_eq!(s1.waves[0].fleets.len(), 3);
    w.fleets.remove("b");
    w.fleets.get_mut("c").unwrap().metadata.labels = Some(Default::default());
    w.serve("a");
    w.fleets.get_mut("a").unwrap().metadata.labels =
        Some([("tier".to_string(), "web".to_string())].into());
    let s2 = w.step(Some(&s1), at(1));
    assert_eq!(fleet_phase(&s2, "b"), FleetPhase::Left);
    assert_eq!(fleet_phase(&s2, "c"), FleetPhase::Left);
    assert_eq!(
        s2.waves[0].fleets[1].reason.as_deref(),
        Some("FleetDeleted")
    );
    assert_eq!(s2.waves[0].fleets[2].reason.as_deref(), Some("Unselected"));
    assert_eq!(s2.phase, RolloutPhase::Succeeded);
}

#[test]
fn a_new_revision_supersedes_the_one_under_way_from_the_first_wave() {
    let r = rollout(json!([{"fleets": 1, "bake": "0s"}, {}]), json!({}));
    let mut w = World::new(r, &["a", "b"]);
    let s1 = w.step(None, at(0));
    w.serve("a");
    let s2 = w.step(Some(&s1), at(1));
    assert_eq!(s2.waves[1].phase, WavePhase::Publishing);
    w.target = Ok(TargetNow {
        revision: "r/w:3".into(),
        digest: None,
        key: "key-3".into(),
    });
    let s3 = w.step(Some(&s2), at(2));
    assert_eq!(s3.target.as_ref().unwrap().revision, "r/w:3");
    assert_eq!(
        phases(&s3),
        [
            (
                1,
                WavePhase::Publishing,
                vec![("a".into(), FleetPhase::Publishing)]
            ),
            (2, WavePhase::Pending, vec![]),
        ]
    );
    let notes = crate::rollout::notes::notes(Some(&s2), &s3);
    assert!(notes.iter().any(|n| n.reason == "Superseded"), "{notes:?}");
}

#[test]
fn skipped_fleets_and_fleets_no_wave_takes_are_listed() {
    let r = rollout(json!([{"fleets": 1}]), json!({}));
    let mut w = World::new(r, &["a", "b"]);
    let mut own = fleet("c", "0000000000000001", false);
    own.spec.source = Some(Box::new(celld_api::WorkerSource::from_image("r/x:1")));
    w.fleets.insert("c".into(), own);
    let s1 = w.step(None, at(0));
    let skipped: Vec<(&str, SkipReason)> = s1
        .skipped
        .iter()
        .map(|k| (k.name.as_str(), k.reason))
        .collect();
    assert_eq!(
        skipped,
        [("c", SkipReason::OwnSource), ("b", SkipReason::NoWave)]
    );
    assert_eq!(s1.moved.as_deref(), Some("0/1"));
}

#[test]
fn a_source_with_no_revision_yet_says_so_and_starts_nothing() {
    let r = rollout(json!([{}]), json!({}));
    let mut w = World::new(r, &["a"]);
    w.target = Err(NoTarget {
        message: "OCIRepository 'web' does not exist in the rollout's namespace".into(),
        stalled: true,
    });
    let s = w.step(None, at(0));
    assert!(s.waves.is_empty());
    assert_eq!(
        condition(&s, "Stalled").as_deref(),
        Some("True SourceNotReady")
    );
}
