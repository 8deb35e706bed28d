//! The fleets-by-Ready gauge follows the fleets: housekeeping recounts it in the round after
//! the fleets' watch brought a change (a status written, a fleet deleted), not only once a
//! minute while nothing moves.

use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{Check, wait_until};
use kube::api::DeleteParams;
use serde_json::json;
use std::time::Duration;

/// Two housekeeping rounds (every 5 s) and the time the change takes to arrive, well under the
/// minute after which a round recounts whatever moved.
const WITHIN: Duration = Duration::from_secs(20);

/// The gauge's fleets by Ready status: True, False, Unknown.
fn by_ready(op: &Operator) -> [Option<u64>; 3] {
    let metrics = op.metrics.encode();
    ["True", "False", "Unknown"].map(|status| {
        let series = format!("celld_operator_fleets{{condition=\"Ready\",status=\"{status}\"}} ");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(series.as_str())?.parse().ok())
    })
}

async fn wait_for_gauge(op: &Operator, want: [u64; 3], what: &str) {
    wait_until(what, WITHIN, || {
        let counts = by_ready(op);
        async move {
            if counts == want.map(Some) {
                Check::Done(())
            } else {
                Check::Pending(format!("Ready True, False, Unknown: {counts:?}"))
            }
        }
    })
    .await
    .expect(what);
}

#[tokio::test]
async fn the_fleets_by_ready_gauge_counts_a_fleet_ready_and_then_deleted() {
    let (env, op) = env_with_operator("fleets-gauge").await;
    deployed_fleet(&env, "web", "00000000000000b1", json!({})).await;
    wait_condition(&env, "web", "Ready", "True", None).await;
    wait_for_gauge(&op, [1, 0, 0], "the gauge counts the Ready fleet").await;

    env.api::<CelldFleet>()
        .delete("web", &DeleteParams::default())
        .await
        .expect("fleet deleted");
    wait_for_gauge(
        &op,
        [0, 0, 0],
        "the gauge no longer counts the deleted fleet",
    )
    .await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
