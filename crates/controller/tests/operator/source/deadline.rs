//! A deploy pod no node takes says so, then fails at its deadline.

use super::harness::*;
use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{Check, wait_until};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_deploy_pod_no_node_takes_says_so_then_fails_at_its_deadline() {
    let t = sourced_with(
        "source-unschedulable",
        json!({"nodeSelector": {"celld.test/never": "scheduled"},
            "source": {"image": {"reference": REF1}, "timeout": "30s", "retries": 1}}),
    )
    .await;
    let fleets = t.env.api::<CelldFleet>();
    wait_until("the unschedulable pod in SourceSynced", TIMEOUT, || async {
        let Ok(fleet) = fleets.get("web").await else {
            return Check::Pending("no fleet".into());
        };
        let c = celld_api::conditions::find(
            &fleet.status.clone().unwrap_or_default().conditions,
            "SourceSynced",
        )
        .cloned();
        match c {
            Some(c) if c.message.contains("Unschedulable") && c.reason == "Publishing" => {
                Check::Done(())
            }
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("the scheduler's refusal shown at once");
    let stalled = wait_until(
        "the Job failed at its deadline",
        Duration::from_secs(90),
        || async {
            let c = condition(&t.env, "web", "Stalled").await;
            if c.status == "True" && c.reason == "PublishFailed" {
                Check::Done(c)
            } else {
                Check::Pending(format!("{c:?}"))
            }
        },
    )
    .await
    .expect("stalled after its only attempt");
    assert!(
        stalled.message.contains("DeadlineExceeded") && stalled.message.contains("Unschedulable"),
        "{}",
        stalled.message
    );
}
