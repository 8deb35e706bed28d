//! Two operator replicas: only the Lease holder writes; when it dies the other takes over.

use crate::support::*;
use celld_testkit::{Check, wait_for_object, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn only_the_leader_writes_and_a_standby_takes_over() {
    let (env, first) = env_with_operator("leader").await;
    let second = start(operator_client(&env).await, settings(&env, "op-2"));
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "leader");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "0000000000000201").await;
    apply_fleet(
        &env,
        &inline_fleet("led", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "led", "Ready", "True", None).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let (leader, standby) = match (first.leads(), second.leads()) {
        (true, false) => (first, second),
        (false, true) => (second, first),
        other => panic!("exactly one replica must lead, got {other:?}"),
    };
    assert!(
        leader.metrics.total_writes() > 0,
        "the leader wrote the fleet's children"
    );
    assert_eq!(
        standby.metrics.total_writes(),
        0,
        "the standby wrote nothing"
    );
    assert_eq!(
        standby.metrics.ok_reconciles(),
        0,
        "the standby reconciled nothing"
    );

    leader.kill();
    wait_until(
        "the standby to take the Lease",
        Duration::from_secs(30),
        || async {
            if standby.leads() {
                Check::Done(())
            } else {
                Check::Pending("standing by".into())
            }
        },
    )
    .await
    .expect("failover");
    apply_fleet(
        &env,
        &inline_fleet("led", &s3, &prefix, json!({"replicas": 3})).expect("a valid CelldFleet"),
    )
    .await;
    wait_for_object(
        &env.api::<StatefulSet>(),
        "led",
        "3 replicas from the new leader",
        TIMEOUT,
        |s| s.spec.as_ref().and_then(|s| s.replicas) == Some(3),
    )
    .await
    .expect("the new leader reconciles");
    assert!(standby.metrics.total_writes() > 0);
    standby.stop().await;
    env.cleanup().await.expect("cleanup");
}
