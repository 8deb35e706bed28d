//! A rollout that does not finish within spec.progressDeadlineSeconds is reported as Deployments
//! report it: Progressing=False with reason ProgressDeadlineExceeded and one Warning Event, both
//! naming the nodes that hold it; a fix starts the rollout again and it ends Stable.

use crate::support::*;
use serde_json::json;

#[tokio::test]
async fn a_stuck_rollout_is_reported_past_its_deadline_naming_its_nodes() {
    let (env, op) = env_with_operator("deadline").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "deadline");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000c1").await;
    // No node carries this label: the pods stay Pending, never ready.
    let stuck = json!({
        "progressDeadlineSeconds": 5,
        "nodeSelector": {"celld.test/never": "scheduled"},
    });
    apply_fleet(
        &env,
        &inline_fleet("stuck", &s3, &prefix, stuck).expect("a CelldFleet"),
    )
    .await;

    let fleet = wait_condition(
        &env,
        "stuck",
        "Progressing",
        "False",
        Some("ProgressDeadlineExceeded"),
    )
    .await;
    let conditions = fleet.status.expect("status").conditions;
    let progressing = celld_api::conditions::find(&conditions, "Progressing").expect("Progressing");
    assert!(
        progressing
            .message
            .starts_with("the rollout did not finish within 5 s (spec.progressDeadlineSeconds), held by stuck-0 (not ready), stuck-1 (not ready)"),
        "{}",
        progressing.message
    );
    let ready = celld_api::conditions::find(&conditions, "Ready").expect("Ready");
    assert_eq!(ready.status, "False");
    // It stays reported with one Warning, not one per reconcile.
    tokio::time::sleep(std::time::Duration::from_secs(8)).await;
    let still = wait_condition(
        &env,
        "stuck",
        "Progressing",
        "False",
        Some("ProgressDeadlineExceeded"),
    )
    .await;
    let since =
        celld_api::conditions::find(&still.status.expect("status").conditions, "Progressing")
            .expect("Progressing")
            .last_transition_time
            .clone();
    assert_eq!(
        since,
        progressing.last_transition_time.clone(),
        "the condition did not flap"
    );
    let warnings = wait_events(&env, "stuck", "Warning", "ProgressDeadlineExceeded").await;
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0]
            .message
            .as_deref()
            .is_some_and(|n| n.contains("held by stuck-0 (not ready)")),
        "{:#?}",
        warnings[0]
    );

    // The fix is a new spec: a new rollout, which finishes.
    apply_fleet(
        &env,
        &inline_fleet(
            "stuck",
            &s3,
            &prefix,
            json!({"progressDeadlineSeconds": 120, "nodeSelector": {}}),
        )
        .expect("a CelldFleet"),
    )
    .await;
    wait_condition(&env, "stuck", "Ready", "True", None).await;
    wait_condition(&env, "stuck", "Progressing", "False", Some("Stable")).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
