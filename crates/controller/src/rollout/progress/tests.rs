use super::*;
use crate::rollout::input::Checked;
use crate::rollout::target::{NoTarget, TargetNow};
use celld_api::CelldFleet;
use celld_api::rollout::selection;
use celld_api::rollout::{CelldRollout, GateResult};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;
use std::collections::BTreeMap;

const REVISION: &str =
    "r.example.com/w:2@sha256:0000000000000000000000000000000000000000000000000000000000000002";

fn rollout(waves: serde_json::Value, extra: serde_json::Value) -> CelldRollout {
    let mut spec = json!({
        "source": {"image": {"reference": REVISION}},
        "selector": {},
        "waves": waves,
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldRollout",
        "metadata": {"name": "web", "namespace": "t", "uid": "u-web", "generation": 1},
        "spec": spec,
    }))
    .unwrap()
}

/// A fleet serving `version` (the rollout's when `published`), Ready and Adopted.
fn fleet(name: &str, version: &str, published: bool) -> CelldFleet {
    let source = published.then(|| {
        json!({
            "rollout": "web",
            "lastPublished": {"revision": REVISION, "version": version, "publishedAt": "t", "key": "k"},
        })
    });
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldFleet",
        "metadata": {"name": name, "namespace": "t"},
        "spec": {"objectStorage": {"bucket": format!("s3://b/{name}")}},
        "status": {
            "deployment": {"version": version, "scriptName": "w", "adopted": "2/2"},
            "source": source,
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "Adopted", "status": "True", "reason": "Adopted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            ],
        },
    }))
    .unwrap()
}

fn with_condition(mut f: CelldFleet, type_: &str, reason: &str) -> CelldFleet {
    let status = f.status.as_mut().unwrap();
    status.conditions.retain(|c| c.type_ != type_);
    status.conditions.push(
        serde_json::from_value(json!({
            "type": type_, "status": "True", "reason": reason, "message": "it broke",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }))
        .unwrap(),
    );
    f
}

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + s).unwrap()
}

fn target() -> Result<TargetNow, NoTarget> {
    Ok(TargetNow {
        revision: REVISION.into(),
        digest: None,
        key: "key-2".into(),
    })
}

/// A world: a rollout, its fleets, and what the annotations and outcomes say.
struct World {
    rollout: CelldRollout,
    fleets: BTreeMap<String, CelldFleet>,
    target: Result<TargetNow, NoTarget>,
    paused: Option<&'static str>,
    promotion: Option<&'static str>,
    aborted: Option<&'static str>,
    checked: Option<Checked>,
    pointed_back: BTreeMap<String, PointedBack>,
}

impl World {
    fn new(rollout: CelldRollout, fleets: &[&str]) -> Self {
        Self {
            rollout,
            fleets: fleets
                .iter()
                .map(|n| ((*n).to_string(), fleet(n, "0000000000000001", false)))
                .collect(),
            target: target(),
            paused: None,
            promotion: None,
            aborted: None,
            checked: None,
            pointed_back: BTreeMap::new(),
        }
    }

    /// `name` published the revision as `version` and every node serves it.
    fn serve(&mut self, name: &str) {
        self.fleets
            .insert(name.into(), fleet(name, "0000000000000002", true));
    }

    fn step(&self, previous: Option<&CelldRolloutStatus>, now: Timestamp) -> CelldRolloutStatus {
        let fleets: Vec<&CelldFleet> = self.fleets.values().collect();
        let selection = selection::select(&self.rollout, fleets, &[&self.rollout]);
        step(
            &Input {
                rollout: &self.rollout,
                selection: &selection,
                fleets: &self.fleets,
                target: &self.target,
                paused: self.paused,
                promotion: self.promotion,
                aborted: self.aborted,
                checked: self.checked.as_ref(),
                pointed_back: &self.pointed_back,
                now,
            },
            previous,
        )
    }
}

/// A wave's number, phase and fleets with theirs.
type WaveSeen = (i32, WavePhase, Vec<(String, FleetPhase)>);

fn phases(s: &CelldRolloutStatus) -> Vec<WaveSeen> {
    s.waves
        .iter()
        .map(|w| {
            (
                w.number,
                w.phase,
                w.fleets.iter().map(|f| (f.name.clone(), f.phase)).collect(),
            )
        })
        .collect()
}

fn fleet_phase(s: &CelldRolloutStatus, name: &str) -> FleetPhase {
    s.waves
        .iter()
        .flat_map(|w| &w.fleets)
        .find(|f| f.name == name)
        .map(|f| f.phase)
        .unwrap_or(FleetPhase::Pending)
}

fn condition(s: &CelldRolloutStatus, type_: &str) -> Option<String> {
    s.conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| format!("{} {}", c.status, c.reason))
}

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
