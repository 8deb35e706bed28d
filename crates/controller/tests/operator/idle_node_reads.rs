//! An idle fleet's nodes are read at the capacity read rate, once: its periodic full
//! reconciles refresh status.nodes from the capacity reader's reading instead of reading the
//! nodes again.

use crate::support::*;
use celld_fixtures::NodeDouble;
use celld_testkit::{Check, wait_until};
use serde_json::json;
use std::time::Duration;

const V1: &str = "00000000000000a1";

/// Node reads the double answered, capacity reads the operator sent, and full reconciles.
fn counts(nodes: &NodeDouble, op: &Operator) -> (u64, u64, u64) {
    (
        nodes.total_state_reads() as u64,
        op.metrics.node_state_reads(),
        op.metrics.ok_reconciles() - op.metrics.unchanged_reconciles(),
    )
}

#[tokio::test]
async fn periodic_full_reconciles_take_the_capacity_reading_of_the_nodes() {
    // Every resync (2 s) of the settled fleet is then a periodic full reconcile.
    let (env, nodes, op) = env_reading_nodes("idle-node-reads", "0.6.1", V1, |s| {
        s.full_every = Duration::from_secs(1);
    })
    .await;
    let spec = json!({"image": "ghcr.io/denoland/celld:v0.6.1", "replicas": 2});
    deployed_fleet(&env, "web", V1, spec).await;
    wait_condition(&env, "web", "Ready", "True", None).await;
    wait_until(
        "the capacity reader reading the nodes",
        Duration::from_secs(30),
        || async {
            match op.metrics.node_state_reads() {
                n if n >= 4 => Check::Done(()),
                n => Check::Pending(format!("{n} capacity reads")),
            }
        },
    )
    .await
    .expect("capacity reads");

    let before = counts(&nodes, &op);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let after = counts(&nodes, &op);
    let (reads, capacity, full) = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
    assert!(
        full >= 3,
        "the settled fleet had periodic full reconciles: {full} in 10 s"
    );
    assert!(capacity >= 4, "the capacity reader went on: {capacity}");
    // A capacity reading may be under way at either end of the window: one fleet, 2 nodes.
    assert!(
        reads <= capacity + 2,
        "{reads} node reads in 10 s, {capacity} of them the capacity reader's: the {full} full \
         reconciles read the nodes again"
    );

    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
