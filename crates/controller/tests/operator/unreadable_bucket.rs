//! A bucket the operator cannot read is reported once, as Degraded with one Warning Event, without
//! a write per resync, and healed when it can be read again. The S3 server stopping under many
//! fleets, with the operator as a process: resilience/s3_outage.rs.

use crate::support::*;
use celld_api::reasons::Reason;
use celld_testkit::{Check, wait_until};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn an_unreadable_bucket_is_reported_once_without_a_write_per_resync() {
    let (env, op) = env_with_operator("nobucket").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "nobucket");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000a9").await;
    // Nothing listens on port 1: every read of the deployment pointer fails.
    let unreachable = json!({"objectStorage": {"endpoint": "http://127.0.0.1:1"}});
    apply_fleet(
        &env,
        &inline_fleet("lost", &s3, &prefix, unreachable.clone()).expect("a valid CelldFleet"),
    )
    .await;

    let fleet = wait_condition(&env, "lost", "Degraded", "True", Some("BucketUnreadable")).await;
    let conditions = fleet.status.expect("status").conditions;
    let deployed = celld_api::conditions::find(&conditions, "Deployed").expect("Deployed");
    assert_eq!(
        (deployed.status.as_str(), deployed.reason.as_str()),
        ("Unknown", "BucketUnreadable")
    );
    // Let the rollout's status writes settle, then watch a few failing reconciles.
    wait_condition(&env, "lost", "Progressing", "False", None).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let writes_before = op.metrics.total_writes();
    let failed = op.metrics.failures(Reason::BucketUnreadable);
    wait_until("three more unreadable reads", TIMEOUT, || async {
        let n = op.metrics.failures(Reason::BucketUnreadable);
        if n >= failed + 3 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n} counted"))
        }
    })
    .await
    .expect("the bucket is read again");
    assert_eq!(
        op.metrics.total_writes(),
        writes_before,
        "a failure that persists is not written again:\n{}",
        op.metrics.encode()
    );
    let warnings = events(&env, "lost", "Warning", "BucketUnreadable").await;
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(warnings[0].series.is_none(), "{:#?}", warnings[0]);

    apply_fleet(
        &env,
        &inline_fleet("lost", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "lost", "Degraded", "False", Some("AsExpected")).await;
    wait_condition(&env, "lost", "Deployed", "True", None).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
