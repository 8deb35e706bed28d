//! v0.4.0 → v0.4.1 rolls one node at a time and waits while a node reports restores.

use super::harness::*;
use crate::pod_history::PodHistory;
use crate::support::*;
use celld_api::labels;
use celld_fixtures::NodeDouble;
use k8s_openapi::api::apps::v1::StatefulSet;
use std::collections::BTreeSet;
use std::time::Duration;

#[tokio::test]
async fn v0_4_0_to_v0_4_1_rolls_one_node_at_a_time_and_waits_for_restores() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-roll", V40, 3, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;
    // web-0 keeps restoring cells: no node restarts, not even the first.
    nodes.set_restoring("web-0", 2);

    change_image(&env, V41).await;
    let waiting = wait_condition(
        &env,
        "web",
        "Progressing",
        "True",
        Some("WaitingForRestores"),
    )
    .await;
    let progressing = message(&waiting, "Progressing");
    assert!(
        progressing.contains("node web-0 reports 2 cells restoring"),
        "{progressing}"
    );
    // Several polls later the roll still waits: no node runs v0.4.1.
    tokio::time::sleep(Duration::from_secs(12)).await;
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet read");
    let partition = sts
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition);
    assert_eq!(partition, Some(3), "the roll waits before the last node");
    let now = history.snapshots().pop().expect("pods recorded");
    let on_new: Vec<&str> = now
        .iter()
        .filter(|(_, p)| p.image == V41)
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(on_new.is_empty(), "{now:?}");

    nodes.set_restoring("web-0", 0);
    wait_serving(&env, V41, 3).await;

    // One node at a time: never fewer than two serving nodes once the roll began, and the nodes
    // moved from the highest ordinal down.
    let snapshots = history.snapshots();
    let mut order: Vec<String> = Vec::new();
    for s in snapshots.iter().skip(1) {
        let serving = s.values().filter(|p| p.serving).count();
        assert!(serving >= 2, "more than one node was down at once: {s:?}");
        for (name, pod) in s {
            if pod.image == V41 && !order.contains(name) {
                order.push(name.clone());
            }
        }
    }
    assert_eq!(order, ["web-2", "web-1", "web-0"]);
    assert_eq!(
        nodes.asked(),
        BTreeSet::from(["web-0".to_string(), "web-1".into(), "web-2".into()]),
        "every node's state was read"
    );
    for reason in ["RollingUpgrade", "WaitingForRestores", "UpgradeFinished"] {
        wait_events(&env, "web", "Normal", reason).await;
    }
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet read");
    let annotations = sts.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations.get(labels::HIGHEST_VERSION).map(String::as_str),
        Some("0.4.1")
    );
    assert!(!annotations.contains_key(labels::ROLLING_FROM));
}
