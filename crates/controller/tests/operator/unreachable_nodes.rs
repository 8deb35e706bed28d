//! An operator that cannot reach the nodes' API (run outside the cluster, or kept from the
//! pods' port): each fleet says so once in words that do not change, its status is not written
//! again for it, no Warning is published for it, and the operator says it once for itself (the
//! `celld_operator_nodes_unreachable` gauge).

use crate::support::*;
use celld_api::{Adoption, CelldFleet};
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::core::v1::Event;
use kube::ResourceExt;
use kube::api::ListParams;
use serde_json::json;
use std::time::Duration;

const V1: &str = "00000000000000e1";

/// The operator's count of reads of nodes' states by its reconciles that made no connection.
fn unreachable_reads(op: &Operator) -> u64 {
    let text = op.metrics.encode();
    text.lines()
        .find_map(|line| {
            line.strip_prefix(
                r#"celld_operator_node_state_reads_total{reader="reconcile",result="unreachable"} "#,
            )
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn nodes_out_of_reach_are_said_once_and_the_status_stays_written() {
    let env = env_with_crds("unreachable-nodes").await;
    // No --node-api-connect-to: each node is dialled at its own name, which resolves nowhere
    // outside a cluster. Every second a periodic full reconcile, which reads the nodes again.
    let mut settings = settings(&env, "op-1");
    settings.full_every = Duration::from_secs(1);
    settings.capacity_interval = Duration::from_secs(1);
    let op = start(operator_client(&env).await, settings);
    let spec = json!({"image": "ghcr.io/denoland/celld:v0.6.1", "replicas": 3});
    deployed_fleet(&env, "web", V1, spec).await;

    let fleet = wait_condition(
        &env,
        "web",
        "Adopted",
        "Unknown",
        Some("NodeStateUnreadable"),
    )
    .await;
    let said = message(&fleet, "Adopted");
    assert!(
        said.contains("web-0 (the operator cannot reach its node API)")
            && said.contains("--node-api-connect-to"),
        "{said}"
    );
    wait_condition(&env, "web", "Ready", "True", None).await;
    wait_until("the operator says it reaches no node", TIMEOUT, || async {
        if op
            .metrics
            .encode()
            .contains("celld_operator_nodes_unreachable 1")
        {
            Check::Done(())
        } else {
            Check::Pending(format!("{} unreachable reads", unreachable_reads(&op)))
        }
    })
    .await
    .expect("the gauge");

    // Settled: the nodes are read again and again, and the status is not written for it.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let api = env.api::<CelldFleet>();
    let before = api.get("web").await.expect("fleet");
    let reads_before = unreachable_reads(&op);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let after = api.get("web").await.expect("fleet");
    assert!(
        unreachable_reads(&op) >= reads_before + 3,
        "the reconciles read the nodes again: {} then {}",
        reads_before,
        unreachable_reads(&op)
    );
    assert_eq!(
        before.resource_version(),
        after.resource_version(),
        "the status was written again: {:?} then {:?}",
        before.status,
        after.status
    );
    let status = after.status.expect("status");
    assert_eq!(status.nodes.len(), 3, "{status:?}");

    assert!(
        status
            .nodes
            .iter()
            .all(|n| n.adoption == Adoption::Unreadable
                && n.message.as_deref() == Some("the operator cannot reach its node API")),
        "{:?}",
        status.nodes
    );

    // A fleet created once the operator said it reaches no node: its nodes are taken as out of
    // reach from its first status, and the capacity reader's readings of them, which tell of
    // the operator's network, are not shown in it while it is young.
    let s3 = env.s3().expect("S3 settings");
    let second = prefix(&s3, &format!("{}-api", env.namespace()));
    publish_pointer(&s3, &second, V1).await;
    let spec = json!({"image": "ghcr.io/denoland/celld:v0.6.1", "replicas": 2});
    apply_fleet(
        &env,
        &inline_fleet("api", &s3, &second, spec).expect("a CelldFleet"),
    )
    .await;
    wait_condition(&env, "api", "Ready", "True", None).await;
    let capacity_reads = op.metrics.node_state_reads();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        op.metrics.node_state_reads() > capacity_reads,
        "the capacity reader read nodes meanwhile"
    );
    let second = api.get("api").await.expect("fleet").status.expect("status");
    assert_eq!(second.capacity, None, "{second:?}");
    assert!(
        second
            .nodes
            .iter()
            .all(|n| n.message.as_deref() == Some("the operator cannot reach its node API")),
        "{:?}",
        second.nodes
    );

    let warnings = env
        .api::<Event>()
        .list(&ListParams::default().fields("involvedObject.name=web,type=Warning"))
        .await
        .expect("Events");
    assert!(warnings.items.is_empty(), "{:?}", warnings.items);
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
