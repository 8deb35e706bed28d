//! Rolling changes: one node at a time from the last, each waiting for the one before and for restores.

use super::*;

#[test]
fn a_rollable_change_starts_at_the_last_node_once_no_node_restores() {
    // Nothing moves before the nodes' states are read.
    let up = decide_with(&spec(V41), &live(V40), &Probed::default());
    assert_eq!(up.image, V41);
    assert_eq!((up.partition, up.probe), (3, Some(Probe::NodeStates)));
    assert_eq!(up.rolling_from.as_deref(), Some(V40));
    assert!(matches!(
        up.progress,
        Progress::Rolling {
            updated: 0,
            of: 3,
            ..
        }
    ));
    // A node restores cells (or does not answer: a follower down): no node restarts yet.
    let busy = Probed {
        restores: Some(busy("web-0", "node web-0 did not answer")),
        ..Probed::default()
    };
    let up = decide_with(&spec(V41), &live(V40), &busy);
    assert_eq!((up.image.as_str(), up.partition), (V41, 3));
    assert!(matches!(up.progress, Progress::WaitingForRestores { .. }));
    // Another node not Ready (a follower down): no node restarts.
    let down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-1".into()],
        }),
        ..Probed::default()
    };
    let up = decide_with(&spec(V41), &live(V40), &down);
    assert_eq!(up.partition, 3);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-1 not ready")),
        "{:?}",
        up.progress
    );
    // The next node itself down (a pod that never started): it may be replaced.
    let itself = Probed {
        restores: Some(Restores {
            busy: vec![("web-2".into(), "node web-2 did not answer".into())],
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    assert_eq!(decide_with(&spec(V41), &live(V40), &itself).partition, 2);
    // Every node Ready, none restoring: the last node goes first.
    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    let up = decide_with(&spec(V41), &live(V40), &quiet);
    assert_eq!(up.partition, 2);
}

#[test]
fn any_other_template_change_rolls_through_the_same_gate() {
    let s = spec(V41);
    // At rest the partition is closed.
    assert_eq!(decide_with(&s, &live(V41), &Probed::default()).partition, 3);
    // A new template is pending: it reaches the last node once no node restores.
    let mut pending = live(V41);
    pending.template_pending = true;
    pending.partition = 3;
    pending.updated = 0;
    let up = decide_with(&s, &pending, &Probed::default());
    assert_eq!((up.partition, up.probe), (3, Some(Probe::NodeStates)));
    assert!(matches!(
        up.progress,
        Progress::RollingTemplate { updated: 0, of: 3 }
    ));
    let busy = Probed {
        restores: Some(busy("web-1", "node web-1 restores 4 cells")),
        ..Probed::default()
    };
    let up = decide_with(&s, &pending, &busy);
    assert_eq!(up.partition, 3);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-1"))
    );
    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    assert_eq!(decide_with(&s, &pending, &quiet).partition, 2);
    // The updated node is not Ready yet: the next one waits.
    pending.partition = 2;
    pending.updated = 1;
    pending.ready = 2;
    let updated_down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    assert_eq!(decide_with(&s, &pending, &updated_down).partition, 2);
    // Two nodes down: not even probed.
    pending.ready = 1;
    let up = decide_with(&s, &pending, &Probed::default());
    assert_eq!((up.partition, up.probe), (2, None));
    // None serves (a fleet that never came up): the change, perhaps its fix, goes on.
    pending.ready = 0;
    assert_eq!(decide_with(&s, &pending, &Probed::default()).partition, 1);
    pending.ready = 2;
    // Every node updated: open until the StatefulSet completes the roll, then closed again.
    pending.partition = 0;
    pending.updated = 3;
    pending.ready = 3;
    assert_eq!(decide_with(&s, &pending, &quiet).partition, 0);
    pending.template_pending = false;
    assert_eq!(decide_with(&s, &pending, &quiet).partition, 3);
}

#[test]
fn the_next_node_waits_for_the_updated_one_then_for_restores() {
    let s = spec(V41);
    // The last node is not Ready yet on the new image: the probe names it, the next waits.
    let mut waiting = live(V41).rolling_from(V40, 2, 1);
    waiting.ready = 2;
    let up = decide_with(&s, &waiting, &Probed::default());
    assert_eq!((up.partition, up.probe), (2, Some(Probe::NodeStates)));
    let web2_down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    let up = decide_with(&s, &waiting, &web2_down);
    assert_eq!(up.partition, 2);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-2 not ready")),
        "{:?}",
        up.progress
    );
    // A stale status says nothing about the new partition.
    let mut stale = live(V41).rolling_from(V40, 2, 1);
    stale.current = false;
    assert_eq!(decide_with(&s, &stale, &Probed::default()).probe, None);

    let step_done = live(V41).rolling_from(V40, 2, 1);
    let up = decide_with(&s, &step_done, &Probed::default());
    assert_eq!((up.partition, up.probe), (2, Some(Probe::NodeStates)));

    let busy = Probed {
        restores: Some(busy("web-0", "node web-0 restores 2 cells")),
        ..Probed::default()
    };
    let up = decide_with(&s, &step_done, &busy);
    assert_eq!(up.partition, 2);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-0"))
    );

    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    let up = decide_with(&s, &step_done, &quiet);
    assert_eq!((up.image.as_str(), up.partition), (V41, 1));
    assert_eq!(up.rolling_from.as_deref(), Some(V40));
}

#[test]
fn the_roll_ends_when_the_first_node_is_updated() {
    let up = decide_with(
        &spec(V41),
        &live(V41).rolling_from(V40, 0, 3),
        &Probed::default(),
    );
    assert_eq!(up, Upgrade::steady(V41, Some(Version::new(0, 4, 1)), 3));
}
