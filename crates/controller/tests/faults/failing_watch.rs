//! One watch that keeps failing: the HTTPRoute CRD is deleted under a running operator, so its
//! HTTPRoute watch gets 404 forever. The other watches must carry on (fleet changes applied at
//! once, not held back by that watch's backoff), and `/healthz` must fail, naming that watch,
//! once it has been silent for the bound, so that Kubernetes restarts the replica (which then no
//! longer watches HTTPRoutes).

use crate::support::*;
use celld_testkit::{Check, wait_until};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::DeleteParams;
use std::time::{Duration, Instant};

/// How long a fleet change may take while another watch fails.
const PROMPTLY: Duration = Duration::from_secs(3);

#[tokio::test]
async fn a_watch_that_keeps_failing_holds_back_no_other_and_fails_healthz() {
    let plane = Plane::start("failing-watch").await;
    let op = plane
        .operator(
            "operator",
            &[
                "--leader-elect=false",
                "--namespace",
                &plane.ns,
                "--watch-timeout-seconds",
                "5",
                "--watch-stale-seconds",
                "20",
            ],
        )
        .await;
    let names = vec!["steady".to_string()];
    plane.apply(&plane.fleet("steady", 1, &[]).await).await;
    plane.wait_ready(&names, Duration::from_secs(90)).await;
    assert!(
        op.get("/healthz")
            .await
            .expect("the operator's /healthz answers")
            .contains(" 200 ")
    );

    let crds: Api<CustomResourceDefinition> = Api::all(plane.admin.clone());
    crds.delete(
        "httproutes.gateway.networking.k8s.io",
        &DeleteParams::default(),
    )
    .await
    .expect("HTTPRoute CRD deleted");
    let deleted = Instant::now();

    let mut delays = Vec::new();
    for replicas in 2..=4 {
        // Let the failing watch fail a few more times first.
        tokio::time::sleep(Duration::from_secs(6)).await;
        let changed = Instant::now();
        plane
            .apply(&plane.fleet("steady", replicas, &[]).await)
            .await;
        let applied = plane
            .wait_statefulset("steady", "the new replicas", Duration::from_secs(90), |s| {
                s.spec.as_ref().and_then(|s| s.replicas) == Some(replicas)
            })
            .await;
        delays.push(applied - changed);
    }
    eprintln!("fleet changes applied while the HTTPRoute watch failed: {delays:?}");
    for delay in &delays {
        assert!(*delay <= PROMPTLY, "a change waited {delay:?}: {delays:?}");
    }

    let unhealthy = wait_until("/healthz to fail", Duration::from_secs(60), || async {
        let reply = op
            .get("/healthz")
            .await
            .expect("the operator's /healthz answers");
        if reply.contains(" 503 ") {
            Check::Done(reply)
        } else {
            Check::Pending(reply)
        }
    })
    .await
    .expect("a watch silent beyond the bound fails /healthz");
    eprintln!(
        "/healthz failed {:?} after the CRD was deleted",
        deleted.elapsed()
    );
    assert!(
        unhealthy.contains("watch HTTPRoute silent for"),
        "{unhealthy}"
    );
    assert!(!unhealthy.contains("watch CelldFleet "), "{unhealthy}");
    plane.stop().await;
}
