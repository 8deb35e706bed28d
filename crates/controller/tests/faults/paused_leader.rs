//! A leader paused (SIGSTOP) for longer than its Lease: a second replica takes over and applies
//! a change; when the first one resumes (SIGCONT), its cache and timers are stale, yet it sends
//! no write, and it exits so that it starts again as a standby.

use crate::support::*;
use celld_api::CelldFleet;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Event;
use kube::api::ListParams;
use std::time::{Duration, Instant};

const FLEETS: usize = 4;

/// What a stale write would change: each StatefulSet's generation and replicas, each fleet's
/// observed generation.
async fn snapshot(plane: &Plane, names: &[String]) -> Vec<(String, i64, Option<i32>, Option<i64>)> {
    let mut seen = Vec::new();
    for name in names {
        let sts = plane
            .api::<StatefulSet>()
            .get(name)
            .await
            .expect("StatefulSet");
        let fleet = plane.api::<CelldFleet>().get(name).await.expect("fleet");
        seen.push((
            name.clone(),
            sts.metadata.generation.unwrap_or_default(),
            sts.spec.and_then(|s| s.replicas),
            fleet.status.and_then(|s| s.observed_generation),
        ));
    }
    seen
}

/// Events the replica `identity` reported.
async fn events_by(plane: &Plane, identity: &str) -> usize {
    plane
        .api::<Event>()
        .list(&ListParams::default())
        .await
        .expect("Events")
        .items
        .iter()
        .filter(|e| e.reporting_instance.as_deref() == Some(identity))
        .count()
}

#[tokio::test]
async fn a_leader_paused_beyond_its_lease_writes_nothing_when_it_resumes_and_exits() {
    let plane = Plane::start("paused-leader").await;
    let replica = |identity: &'static str| {
        [
            "--namespace",
            plane.ns.as_str(),
            "--lease-namespace",
            plane.ns.as_str(),
            "--identity",
            identity,
            "--lease-duration-seconds",
            "4",
            "--resync-seconds",
            "1",
        ]
    };
    let mut first = plane.operator("first", &replica("first")).await;
    first
        .wait_leading(Duration::from_secs(30))
        .await
        .expect("the operator leads");
    let names: Vec<String> = (0..FLEETS).map(|i| format!("paused-{i}")).collect();
    for name in &names {
        plane.apply(&plane.fleet(name, 1, &[]).await).await;
    }
    plane.wait_ready(&names, Duration::from_secs(90)).await;

    let pid = first.pid().expect("the first replica runs");
    signal(pid, "STOP");
    let paused = Instant::now();
    // While it sleeps, the fleets change; its cache keeps the old spec.
    for name in &names {
        plane.apply(&plane.fleet(name, 2, &[]).await).await;
    }
    let second = plane.operator("second", &replica("second")).await;
    second
        .wait_leading(Duration::from_secs(30))
        .await
        .expect("the operator leads");
    for name in &names {
        plane
            .wait_statefulset(
                name,
                "2 replicas from the new leader",
                APPLIED_WITHIN,
                |s| s.spec.as_ref().and_then(|s| s.replicas) == Some(2),
            )
            .await;
    }
    plane.wait_ready(&names, Duration::from_secs(60)).await;
    let before = snapshot(&plane, &names).await;
    let events_before = events_by(&plane, "first").await;
    let log_before = first.log().expect("log").len();

    eprintln!(
        "first replica paused for {:?}; resuming it",
        paused.elapsed()
    );
    signal(pid, "CONT");
    let resumed = Instant::now();
    // Watch for a stale write until it has exited, and a little longer.
    let mut exited_at = None;
    while resumed.elapsed() < Duration::from_secs(30) {
        assert_eq!(
            snapshot(&plane, &names).await,
            before,
            "a stale write landed"
        );
        if exited_at.is_none() && !first.is_running() {
            exited_at = Some(resumed.elapsed());
        }
        if exited_at.is_some_and(|t| resumed.elapsed() > t + Duration::from_secs(3)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let exited_after = exited_at.expect("the resumed replica exits");
    let status = first.kill().await.expect("exit status").expect("it ran");
    assert_eq!(
        status.code(),
        Some(2),
        "exit code of a replica that lost the Lease"
    );
    eprintln!("the resumed replica exited after {exited_after:?}, with {status}");

    assert_eq!(
        events_by(&plane, "first").await,
        events_before,
        "Events it published"
    );
    let log = first.log().expect("log");
    let after = &log[log_before..];
    assert!(
        !after.contains(" applied "),
        "it applied children:\n{after}"
    );
    assert!(after.contains("Lease"), "it says why it exits:\n{after}");
    assert_eq!(snapshot(&plane, &names).await, before);
    drop(second);
    plane.stop().await;
}
