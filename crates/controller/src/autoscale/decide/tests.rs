use super::*;
use crate::capacity::reading::FleetReading;
use crate::capacity::signals::{Hold, Signals};
use crate::capacity::store::{CapacityStore, FleetRef};
use std::time::Instant;

fn t(s: i64) -> Timestamp {
    Timestamp::from_second(1_000_000 + s).unwrap()
}

fn policy() -> Autoscaling {
    let mut p = Autoscaling::between(2, 6);
    p.scale_up.stabilization_window_seconds = 30;
    p.scale_up.period_seconds = 60;
    p.scale_up.max_nodes_per_step = 2;
    p.scale_down.stabilization_window_seconds = 300;
    p.scale_down.period_seconds = 300;
    p
}

fn up() -> Signals {
    Signals {
        up: Some((
            Reason::CapacityWaiting,
            "3 activations wait for capacity on 1 node (web-0 3)".into(),
        )),
        down: Err(Hold {
            reason: Reason::NoHeadroom,
            message: "waiting".into(),
        }),
    }
}

fn room() -> Signals {
    Signals {
        up: None,
        down: Ok("every node has memory headroom".into()),
    }
}

fn held(reason: Reason) -> Signals {
    Signals {
        up: None,
        down: Err(Hold {
            reason,
            message: format!("{reason} holds"),
        }),
    }
}

/// What the store tracks after readings at `times`, each with `signals`.
fn tracked(signals: Signals, times: &[i64]) -> Tracked {
    let store = CapacityStore::default();
    let fleet = FleetRef {
        uid: "u",
        namespace: "ns",
        name: "web",
    };
    for &at in times {
        let reading = FleetReading {
            read_at: t(at),
            nodes: Vec::new(),
        };
        store.record(fleet, reading, Instant::now(), Some(signals.clone()));
    }
    store.get("u").unwrap()
}

fn previous(desired: i32, last: Option<(i64, i32, i32)>) -> AutoscalingStatus {
    AutoscalingStatus {
        desired_replicas: desired,
        current_replicas: desired,
        last_scale_time: last.map(|(at, ..)| t(at).to_string()),
        last_decision: last.map(|(at, from, to)| ScaleDecision {
            time: t(at).to_string(),
            from,
            to,
            reason: "CapacityWaiting".into(),
            message: String::new(),
        }),
        ..AutoscalingStatus::default()
    }
}

fn facts<'a>(
    policy: &'a Autoscaling,
    previous: Option<&'a AutoscalingStatus>,
    tracked: Option<&'a Tracked>,
    now: i64,
) -> Facts<'a> {
    Facts {
        policy,
        previous,
        spec_replicas: 3,
        current: previous.map_or(3, |p| p.current_replicas),
        tracked,
        stale: false,
        busy: None,
        contested: None,
        now: t(now),
    }
}

#[test]
fn starts_from_spec_replicas_within_the_bounds() {
    let p = policy();
    let mut f = facts(&p, None, None, 0);
    f.current = 9;
    let s = decide(&f);
    assert_eq!(s.desired, 6);
    let d = s.decision.unwrap();
    assert_eq!((d.from, d.to, d.reason.as_str()), (9, 6, "AboveMaximum"));
    assert_eq!(
        (s.verdict.status, s.verdict.reason),
        (Some(true), Reason::Scaling)
    );
    let s = decide(&facts(&p, None, None, 0));
    assert_eq!(
        (s.desired, s.decision),
        (3, None),
        "within the bounds: nothing to do"
    );
    assert_eq!(s.verdict.status, None, "not read yet");
    assert_eq!(s.verdict.reason, Reason::StateUnreadable);
}

#[test]
fn adds_nodes_once_the_signal_held_for_the_window() {
    let p = policy();
    let prev = previous(3, None);
    let early = tracked(up(), &[0, 10]);
    let s = decide(&facts(&p, Some(&prev), Some(&early), 10));
    assert_eq!(s.desired, 3);
    assert_eq!(s.wake_at, Some(t(30)));
    let holding = s.status.holding.unwrap();
    assert_eq!(holding.reason, "Stabilizing");
    assert!(
        holding.message.contains("5 nodes at"),
        "{}",
        holding.message
    );
    assert_eq!(s.status.scale_up_signal_since, Some(t(0).to_string()));

    let held = tracked(up(), &[0, 15, 30]);
    let s = decide(&facts(&p, Some(&prev), Some(&held), 30));
    assert_eq!(s.desired, 5);
    let d = s.decision.unwrap();
    assert_eq!((d.from, d.to, d.reason.as_str()), (3, 5, "CapacityWaiting"));
    assert_eq!(
        d.message,
        "from 3 to 5 nodes: 3 activations wait for capacity on 1 node (web-0 3)"
    );
    assert_eq!(s.status.last_scale_time, Some(t(30).to_string()));
    assert_eq!(s.verdict.reason, Reason::Scaling);
}

#[test]
fn a_step_up_waits_for_the_period_and_stops_at_the_maximum() {
    let p = policy();
    let after = previous(5, Some((30, 3, 5)));
    let still = tracked(up(), &[0, 60]);
    let s = decide(&facts(&p, Some(&after), Some(&still), 60));
    assert_eq!((s.desired, s.wake_at), (5, Some(t(90))));
    let s = decide(&facts(&p, Some(&after), Some(&still), 90));
    assert_eq!(s.desired, 6, "one step of 2 capped by maxReplicas");
    let top = previous(6, Some((90, 5, 6)));
    let s = decide(&facts(&p, Some(&top), Some(&still), 500));
    assert_eq!(s.desired, 6);
    assert_eq!(s.status.holding.unwrap().reason, "AtMaximum");
    assert_eq!(s.verdict.status, Some(true));
}

#[test]
fn removes_one_node_after_the_window_and_the_period() {
    let p = policy();
    let prev = previous(4, Some((0, 3, 4)));
    let calm = tracked(room(), &[100, 200]);
    let s = decide(&facts(&p, Some(&prev), Some(&calm), 200));
    assert_eq!((s.desired, s.wake_at), (4, Some(t(400))));
    let s = decide(&facts(&p, Some(&prev), Some(&calm), 400));
    assert_eq!(s.desired, 3);
    let d = s.decision.unwrap();
    assert_eq!((d.from, d.to, d.reason.as_str()), (4, 3, "Headroom"));
    let at_min = previous(2, Some((0, 3, 2)));
    let s = decide(&facts(&p, Some(&at_min), Some(&calm), 10_000));
    assert_eq!(
        (s.desired, s.status.holding),
        (2, None),
        "steady at the minimum"
    );
    assert_eq!(s.verdict.reason, Reason::Steady);
}

#[test]
fn busy_restoring_stale_and_unreadable_hold_the_scale_in() {
    let p = policy();
    let prev = previous(4, None);
    let calm = tracked(room(), &[0, 1000]);
    let rollout = Busy {
        reason: Reason::RolloutInProgress,
        message: "2 of 4 nodes are ready".into(),
        holds_up: false,
    };
    let mut f = facts(&p, Some(&prev), Some(&calm), 1000);
    f.busy = Some(&rollout);
    let s = decide(&f);
    assert_eq!(s.desired, 4);
    assert_eq!(
        s.status.holding.as_ref().unwrap().reason,
        "RolloutInProgress"
    );
    assert!(s.paused);

    let restoring = tracked(held(Reason::Restoring), &[0, 1000]);
    let s = decide(&facts(&p, Some(&prev), Some(&restoring), 1000));
    assert_eq!((s.desired, s.paused), (4, true));
    assert_eq!(s.status.holding.unwrap().reason, "Restoring");

    let mut f = facts(&p, Some(&prev), Some(&calm), 1000);
    f.stale = true;
    let s = decide(&f);
    assert_eq!(s.desired, 4);
    assert_eq!(
        (s.verdict.status, s.verdict.reason),
        (Some(false), Reason::StateStale)
    );

    let unreadable = tracked(held(Reason::StateUnreadable), &[0, 1000]);
    let s = decide(&facts(&p, Some(&prev), Some(&unreadable), 1000));
    assert_eq!(s.desired, 4);
    assert_eq!(
        (s.verdict.status, s.verdict.reason),
        (Some(false), Reason::StateUnreadable)
    );

    let mut f = facts(&p, Some(&prev), Some(&calm), 1000);
    f.current = 3;
    let s = decide(&f);
    assert_eq!(s.desired, 4, "a node count still moving holds");
}

#[test]
fn an_upgrade_holds_scale_up_a_publish_does_not() {
    let p = policy();
    let prev = previous(3, None);
    let asking = tracked(up(), &[0, 100]);
    let upgrade = Busy {
        reason: Reason::UpgradeInProgress,
        message: "a change of celld image is under way".into(),
        holds_up: true,
    };
    let mut f = facts(&p, Some(&prev), Some(&asking), 100);
    f.busy = Some(&upgrade);
    assert_eq!(decide(&f).desired, 3);
    let publish = Busy {
        reason: Reason::PublishInProgress,
        message: "publishing".into(),
        holds_up: false,
    };
    f.busy = Some(&publish);
    assert_eq!(decide(&f).desired, 5);
}

#[test]
fn a_contested_count_is_reported_and_ignored() {
    let p = policy();
    let prev = previous(3, None);
    let calm = tracked(held(Reason::NoHeadroom), &[0]);
    let mut f = facts(&p, Some(&prev), Some(&calm), 10);
    f.spec_replicas = 5;
    f.contested = Some("kubectl");
    let s = decide(&f);
    assert_eq!(s.desired, 3);
    assert_eq!(
        (s.verdict.status, s.verdict.reason),
        (Some(false), Reason::ReplicasContested)
    );
    assert!(
        s.verdict
            .message
            .contains("spec.replicas is 5, set through the scale subresource by kubectl")
    );
}

#[test]
fn an_older_celld_says_so() {
    let p = policy();
    let prev = previous(3, None);
    let old = tracked(held(Reason::SignalsUnsupported), &[0]);
    let s = decide(&facts(&p, Some(&prev), Some(&old), 10));
    assert_eq!(
        (s.verdict.status, s.verdict.reason),
        (Some(false), Reason::SignalsUnsupported)
    );
}
