//! Nodes that fence themselves (celld's exit code 3, as the kubelet reports a restarted
//! container): each fence is counted once; repeated fences put NodesFencing on the fleet, naming
//! the nodes and celld's hint, with one Warning; every node's last restart is in its status.

use crate::support::*;
use celld_testkit::restart_containers;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn repeated_fences_are_counted_and_said_once_on_the_fleet() {
    let (env, op) = env_with_operator("fences").await;
    deployed_fleet(&env, "web", "00000000000000a1", json!({"replicas": 2})).await;
    wait_condition(&env, "web", "Ready", "True", None).await;
    let pods = env.api::<Pod>();
    let now = Timestamp::now();

    // A restart that is not a fence, then one fence: counted, not yet repeated.
    restart_containers(&pods, "web-1", 137, now - SignedDuration::from_secs(60), 1)
        .await
        .expect("web-1 restarted after a kill");
    restart_containers(&pods, "web-0", 3, now - SignedDuration::from_secs(30), 1)
        .await
        .expect("web-0 fenced");
    celld_testkit::wait_until("one fence counted", TIMEOUT, || async {
        match op.metrics.node_fences() {
            1 => celld_testkit::Check::Done(()),
            n => celld_testkit::Check::Pending(format!("{n} fences")),
        }
    })
    .await
    .expect("the fence is counted");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let status = env
        .api::<celld_api::CelldFleet>()
        .get("web")
        .await
        .expect("fleet")
        .status
        .expect("status");
    assert!(
        celld_api::conditions::find(&status.conditions, "NodesFencing").is_none(),
        "one fence is not repeated fencing"
    );
    let restart = |node: &str| {
        status
            .nodes
            .iter()
            .find(|n| n.name == node)
            .and_then(|n| n.last_restart.clone())
            .map(|r| r.exit_code)
    };
    assert_eq!(
        (restart("web-0"), restart("web-1")),
        (Some(3), Some(137)),
        "each node's last restart: {:?}",
        status.nodes
    );

    // A second fence: NodesFencing, naming the node, and one Warning.
    restart_containers(&pods, "web-0", 3, Timestamp::now(), 2)
        .await
        .expect("web-0 fenced again");
    let fleet = wait_condition(&env, "web", "NodesFencing", "True", Some("RepeatedFences")).await;
    let said = message(&fleet, "NodesFencing");
    assert!(
        said.contains("web-0 2 times") && !said.contains("web-1") && said.contains("#239"),
        "{said}"
    );
    assert_eq!(op.metrics.node_fences(), 2, "each fence once");
    wait_events(&env, "web", "Warning", "RepeatedFences").await;
    // The same restart seen again (the watch lists anew, the fleet is resynced) counts nothing.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(op.metrics.node_fences(), 2);
    assert_eq!(
        events(&env, "web", "Warning", "RepeatedFences").await.len(),
        1
    );
    assert!(
        op.metrics
            .encode()
            .contains("celld_operator_node_fences_total 2"),
        "exported"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
