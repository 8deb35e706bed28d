//! Fences read from node pods, counted once, kept for their window.

use super::*;

fn pod(name: &str, exit_code: i32, finished: Option<Timestamp>) -> Pod {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "apps", "labels": {labels::FLEET: "web"}},
        "spec": {"containers": [{"name": "celld", "image": "i"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [{
                "name": "celld",
                "image": "i",
                "imageID": "",
                "ready": true,
                "restartCount": 1,
                "state": {"running": {}},
                "lastState": {"terminated": {
                    "exitCode": exit_code,
                    "finishedAt": finished.map(|t| t.to_string()),
                }},
            }],
        },
    }))
    .unwrap()
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_000_000 + seconds).unwrap()
}

#[test]
fn a_fence_is_recorded_once_for_its_fleet() {
    let log = FenceLog::default();
    let fenced = pod("web-0", 3, Some(at(0)));
    let key = ("apps".to_string(), "web".to_string());
    let recorded = |fenced| {
        Some(Recorded {
            fleet: key.clone(),
            fenced,
        })
    };
    assert_eq!(log.record(&fenced, at(5)), recorded(true));
    assert_eq!(
        log.record(&fenced, at(6)),
        None,
        "the same exit, seen again"
    );
    assert_eq!(
        log.record(&pod("web-0", 3, Some(at(30))), at(31)),
        recorded(true)
    );
    assert_eq!(
        log.record(&pod("web-1", 1, Some(at(30))), at(31)),
        recorded(false),
        "a restart, not a fence"
    );
    assert_eq!(log.record(&pod("web-1", 3, None), at(31)), None, "no time");
    let recent = log.recent("apps", "web", at(40));
    assert_eq!(
        recent,
        [
            Fence {
                node: "web-0".into(),
                at: at(0),
                exit_code: 3,
            },
            Fence {
                node: "web-0".into(),
                at: at(30),
                exit_code: 3,
            },
            Fence {
                node: "web-1".into(),
                at: at(30),
                exit_code: 1,
            },
        ]
    );
    assert!(log.recent("apps", "other", at(40)).is_empty());
}

#[test]
fn fences_leave_the_window_and_old_ones_are_not_recorded() {
    let log = FenceLog::default();
    assert_eq!(
        log.record(&pod("web-0", 3, Some(at(0))), at(601)),
        None,
        "too old"
    );
    log.record(&pod("web-0", 3, Some(at(0))), at(1));
    log.record(&pod("web-1", 3, Some(at(300))), at(301));
    assert_eq!(log.recent("apps", "web", at(650)).len(), 1);
    log.forget_old(at(650));
    assert_eq!(lock(&log.fleets).values().map(Vec::len).sum::<usize>(), 1);
    log.forget_old(at(1000));
    assert!(lock(&log.fleets).is_empty());
}

#[test]
fn a_node_that_never_exited_has_no_exit() {
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-0"},
        "status": {"containerStatuses": [{
            "name": "celld", "image": "i", "imageID": "", "ready": true, "restartCount": 0,
        }]},
    }))
    .unwrap();
    assert_eq!(exited(&pod), None);
}
