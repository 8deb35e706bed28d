//! A change of the pod template other than the image waits while a node is down, then rolls one node at a time.

use super::harness::*;
use crate::pod_history::PodHistory;
use crate::support::*;
use celld_api::labels;
use celld_fixtures::NodeDouble;
use celld_testkit::wait_for_object;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_template_change_waits_while_a_node_is_down_then_rolls_one_node_at_a_time() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("template-roll", V41, 3, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;
    let pods = env.api::<k8s_openapi::api::core::v1::Pod>();
    // web-1, a follower, is down: not Ready, its state unreadable.
    celld_testkit::hold_pod_waiting(&pods, "web-1", "CrashLoopBackOff", None)
        .await
        .expect("web-1 down");
    nodes.break_state("web-1", true);

    apply_web(&env, V41, json!([{"name": "RUST_LOG", "value": "debug"}]))
        .await
        .expect("a new template");
    wait_condition(&env, "web", "Progressing", "True", Some("RollingOut")).await;
    tokio::time::sleep(Duration::from_secs(12)).await;
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet");
    let partition = sts
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition);
    assert_eq!(partition, Some(3), "no node restarts while web-1 is down");
    assert_eq!(
        sts.status
            .as_ref()
            .and_then(|s| s.updated_replicas)
            .unwrap_or(0),
        0,
        "no pod has the new template"
    );

    // web-1 is back: the nodes move one at a time, from the last.
    let back = json!({"metadata": {"annotations": {
        celld_testkit::WAITING_REASON_ANNOTATION: null,
        celld_testkit::WAITING_MESSAGE_ANNOTATION: null,
    }}});
    pods.patch(
        "web-1",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&back),
    )
    .await
    .expect("web-1 runs again");
    nodes.break_state("web-1", false);
    wait_for_object(
        &env.api::<StatefulSet>(),
        "web",
        "every node on the new template",
        Duration::from_secs(120),
        |sts| {
            sts.status.as_ref().is_some_and(|s| {
                s.updated_replicas == Some(3)
                    && s.ready_replicas == Some(3)
                    && s.current_revision == s.update_revision
            })
        },
    )
    .await
    .expect("the template rolled");
    assert_eq!(
        node_env(&env, "web", "RUST_LOG").await.as_deref(),
        Some("debug")
    );
    let snapshots = history.snapshots();
    let restarted_at_once = snapshots
        .iter()
        .map(|s| s.values().filter(|p| !p.serving).count())
        .max();
    assert!(
        restarted_at_once <= Some(1),
        "at most one node down at a time once web-1 was back: {snapshots:?}"
    );

    // Removing a node waits while web-0 restores cells, then goes.
    nodes.set_restoring("web-0", 3);
    let fleets = env.api::<celld_api::CelldFleet>();
    fleets
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .expect("two nodes wanted");
    let waiting = wait_condition(
        &env,
        "web",
        "Progressing",
        "True",
        Some("WaitingForRestores"),
    )
    .await;
    assert!(
        message(&waiting, "Progressing").contains("removing nodes (3 to 2)"),
        "{}",
        message(&waiting, "Progressing")
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet");
    assert_eq!(
        sts.spec.and_then(|s| s.replicas),
        Some(3),
        "kept while web-0 restores"
    );
    nodes.set_restoring("web-0", 0);
    wait_for_object(
        &env.api::<StatefulSet>(),
        "web",
        "two nodes",
        Duration::from_secs(60),
        |sts| sts.spec.as_ref().and_then(|s| s.replicas) == Some(2),
    )
    .await
    .expect("the node is removed once none restores");
}
