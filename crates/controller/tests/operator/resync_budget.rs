//! Many fleets stretch the resync: with `--resyncs-per-second` at 1, three settled fleets are
//! each looked at every 3 s, not at every 1 s resync.

use crate::support::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn the_resync_stretches_to_the_budget() {
    let env = env_with_crds("budget").await;
    let client = operator_client(&env).await;
    let op = start(
        client,
        celld_operator::shared::settings::Settings {
            resync: Duration::from_secs(1),
            resyncs_per_second: 1,
            ..settings(&env, "op-1")
        },
    );
    let s3 = env.s3().expect("S3 settings");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let names = ["a", "b", "c"];
    for name in names {
        let prefix = prefix(&s3, &format!("budget-{name}"));
        publish_pointer(&s3, &prefix, "00000000000000d1").await;
        apply_fleet(
            &env,
            &inline_fleet(name, &s3, &prefix, json!({})).expect("a valid CelldFleet"),
        )
        .await;
    }
    for name in names {
        wait_condition(&env, name, "Ready", "True", None).await;
    }
    // Past a housekeeping round (every 5 s), which counts the fleets, and the first resyncs.
    tokio::time::sleep(Duration::from_secs(8)).await;

    let before = op.metrics.unchanged_reconciles();
    let window = Duration::from_secs(15);
    tokio::time::sleep(window).await;
    let resyncs = op.metrics.unchanged_reconciles() - before;
    // Every 3 s each (15 in the window), where the 1 s resync would give 45.
    assert!(
        (6..=24).contains(&resyncs),
        "{resyncs} settled reconciles of 3 fleets in {window:?}"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
