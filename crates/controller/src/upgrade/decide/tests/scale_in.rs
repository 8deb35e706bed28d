//! Removing nodes waits while a node is down or restores.

use super::*;

#[test]
fn removing_nodes_waits_while_a_node_is_down_or_restores() {
    let s = spec(V41);
    let mut three = live(V41);
    // Two wanted, three running, one that stays is not Ready: three are kept.
    three.ready = 2;
    let down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-0".into()],
        }),
        ..Probed::default()
    };
    let up = decide(&s, 2, Some(&three.build()), &down);
    assert_eq!(up.keep_replicas, Some(3));
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-0 not ready")),
        "{:?}",
        up.progress
    );
    // The node removed is the one down: it goes.
    let removed_down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    assert_eq!(
        decide(&s, 2, Some(&three.build()), &removed_down).keep_replicas,
        None
    );
    assert_eq!(
        up.partition, 3,
        "no pod of the kept three takes a new template"
    );
    // All Ready: the states are read first, then a restore holds it, then it goes.
    three.ready = 3;
    let up = decide(&s, 2, Some(&three.build()), &Probed::default());
    assert_eq!(
        (up.keep_replicas, up.probe),
        (Some(3), Some(Probe::NodeStates))
    );
    let busy = Probed {
        restores: Some(busy("web-0", "node web-0 restores 1 cells")),
        ..Probed::default()
    };
    assert_eq!(
        decide(&s, 2, Some(&three.build()), &busy).keep_replicas,
        Some(3)
    );
    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    let up = decide(&s, 2, Some(&three.build()), &quiet);
    assert_eq!((up.keep_replicas, up.partition), (None, 2));
    // Adding nodes, or stopping them all, never waits.
    assert_eq!(
        decide(&s, 4, Some(&three.build()), &Probed::default()).keep_replicas,
        None
    );
    assert_eq!(
        decide(&s, 0, Some(&three.build()), &Probed::default()).keep_replicas,
        None
    );
}
