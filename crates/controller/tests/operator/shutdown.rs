//! Stopping: the operator stops within its shutdown grace even when a watch never lists.

use crate::support::*;
use celld_operator::runtime::wiring::SHUTDOWN_GRACE;
use celld_testkit::{Check, TestEnv, wait_until};
use std::time::Duration;

#[tokio::test]
async fn stops_within_the_grace_when_its_watches_never_list() {
    let env = TestEnv::new("shutdown")
        .await
        .expect("the local control plane is up (make cluster-up)");
    celld_testkit::install_crds(&env.client())
        .await
        .expect("CRDs installed");
    // Allowed to lead, refused every list: its caches never become ready, and kube-runtime
    // holds the controllers' reconciles (and their graceful shutdown) until they are.
    let client = operator_client_with(&env, Grants::LeaderElectionOnly).await;
    let op = start(client, settings(&env, "op-1"));
    wait_until("the operator leads", TIMEOUT, || async {
        if op.leads() {
            Check::Done(())
        } else {
            Check::Pending("not leading".into())
        }
    })
    .await
    .expect("the operator took the Lease");
    // Its watches were refused a few times by now.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        op.stops_within(SHUTDOWN_GRACE + Duration::from_secs(5))
            .await,
        "the operator did not stop within its shutdown grace of {SHUTDOWN_GRACE:?}"
    );
}
