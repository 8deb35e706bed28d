//! etcd crashes under idle fleets and comes back, twice: each time the API server's watch caches
//! re-initialise (their etcd watches resume from a compacted revision, as in any cluster idle for
//! longer than the compaction interval), which ends every watch of the operator at once. Changes
//! made once etcd is back must still be applied within 30 s, and the operator must stay healthy.

use crate::support::*;
use celld_testkit::{Component, compact_etcd};
use std::time::{Duration, Instant};

fn env_of(sts: &k8s_openapi::api::apps::v1::StatefulSet, name: &str) -> Option<String> {
    sts.spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .first()?
        .env
        .as_ref()?
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.value.clone())
}

fn replicas(sts: &k8s_openapi::api::apps::v1::StatefulSet) -> Option<i32> {
    sts.spec.as_ref().and_then(|s| s.replicas)
}

/// Compacts etcd (as after a while of idle fleets), kills it, starts it 10 s later and waits
/// until the API server answers again.
async fn crash_etcd(plane: &Plane) {
    compact_etcd(plane.dir()).await.expect("etcd compacted");
    Component::Etcd
        .crash_and_restart(plane.dir(), Duration::from_secs(10))
        .await
        .expect("etcd restarted");
    plane.wait_answering().await;
}

#[tokio::test]
async fn changes_after_etcd_restarts_are_applied_within_30_seconds() {
    let plane = Plane::start("etcd-restart").await;
    let op = plane
        .operator(
            "operator",
            &["--leader-elect=false", "--namespace", &plane.ns],
        )
        .await;
    let names: Vec<String> = ["one", "two", "three"].map(String::from).to_vec();
    for name in &names {
        plane.apply(&plane.fleet(name, 1, &[]).await).await;
    }
    plane.wait_ready(&names, Duration::from_secs(90)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    // etcd crashes under idle fleets; a replicas change once it is back.
    crash_etcd(&plane).await;
    let changed = Instant::now();
    plane.apply(&plane.fleet("one", 3, &[]).await).await;
    let scaled = plane
        .wait_statefulset("one", "3 replicas", APPLIED_WITHIN, |s| {
            replicas(s) == Some(3)
        })
        .await;

    // It crashes again a little later (an etcd that flaps); a new fleet and an env change.
    tokio::time::sleep(Duration::from_secs(2)).await;
    crash_etcd(&plane).await;
    let changed_again = Instant::now();
    plane.apply(&plane.fleet("four", 1, &[]).await).await;
    plane
        .apply(&plane.fleet("two", 1, &[("GREETING", "hello")]).await)
        .await;
    let created = plane
        .wait_statefulset("four", "created", APPLIED_WITHIN, |_| true)
        .await;
    let env = plane
        .wait_statefulset("two", "GREETING=hello", APPLIED_WITHIN, |s| {
            env_of(s, "GREETING").as_deref() == Some("hello")
        })
        .await;
    let delays = [
        ("replicas, after the first restart", scaled - changed),
        ("new fleet, after the second", created - changed_again),
        ("env, after the second", env - changed_again),
    ];
    eprintln!("changes made once etcd was back were applied after: {delays:?}");
    for (what, delay) in delays {
        assert!(delay <= APPLIED_WITHIN, "{what}: applied after {delay:?}");
    }

    let health = op
        .get("/healthz")
        .await
        .expect("the operator's /healthz answers");
    assert!(health.contains(" 200 "), "healthy after recovery: {health}");
    plane.stop().await;
}
