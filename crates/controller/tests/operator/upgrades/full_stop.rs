//! A full stop: v0.3 → v0.4 and an image of unknown version stop every old node before a new one starts; a downgrade below v0.4.1 once it ran is refused.

use super::harness::*;
use crate::pod_history::PodHistory;
use crate::support::*;
use celld_api::labels;
use celld_fixtures::NodeDouble;
use k8s_openapi::api::apps::v1::StatefulSet;
use std::time::Duration;

#[tokio::test]
async fn v0_3_to_v0_4_stops_every_old_node_before_a_new_one_starts() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-stop", V3, 2, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;

    change_image(&env, V40).await;
    wait_condition(&env, "web", "Progressing", "True", Some("FullStop")).await;
    wait_serving(&env, V40, 2).await;

    assert_never_side_by_side(&history, V3, V40);
    // celld: every old node's lease expires (10 s) before a new node starts.
    let empty = history
        .empty_between(V3, V40)
        .expect("old pods, none, then new");
    assert!(
        empty >= Duration::from_secs(10),
        "the new image started {empty:?} after the last old pod went"
    );
    let stop = wait_events(&env, "web", "Normal", "FullStop").await;
    assert!(
        stop.iter().any(|e| e.message.as_deref().is_some_and(
            |m| m.contains("celld before v0.4.0 and v0.4.0 or later must not run side by side")
        )),
        "a FullStop Event says why: {stop:?}"
    );
    wait_events(&env, "web", "Normal", "UpgradeFinished").await;
    assert!(
        !has_event(&env, "web", "WaitingForRestores", None).await,
        "a full stop waits for the pods to go, not for restores"
    );
}

#[tokio::test]
async fn an_unknown_version_stops_the_fleet_and_a_forbidden_downgrade_is_refused() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-refuse", LATEST, 2, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;

    // latest → v0.4.1: the running version is unknown, so the safe path.
    change_image(&env, V41).await;
    wait_condition(&env, "web", "Progressing", "True", Some("FullStop")).await;
    wait_serving(&env, V41, 2).await;
    assert_never_side_by_side(&history, LATEST, V41);

    // v0.4.1 → v0.4.0 is refused; the nodes keep v0.4.1 and keep serving.
    change_image(&env, V40).await;
    let refused = wait_condition(&env, "web", "Degraded", "True", Some("UpgradeRefused")).await;
    let degraded = message(&refused, "Degraded");
    assert!(
        degraded.contains("spec.image ghcr.io/denoland/celld:v0.4.0 is refused")
            && degraded.contains("may not start again once v0.4.1"),
        "{degraded}"
    );
    assert_eq!(
        wait_events(&env, "web", "Warning", "UpgradeRefused")
            .await
            .len(),
        1,
        "one Warning Event"
    );
    assert_eq!(condition(&env, "web", "Ready").await.status, "True");
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet read");
    let image = sts
        .spec
        .and_then(|s| s.template.spec)
        .and_then(|p| p.containers.into_iter().next())
        .and_then(|c| c.image);
    assert_eq!(image.as_deref(), Some(V41));

    // Back to v0.4.1: the refusal heals.
    change_image(&env, V41).await;
    wait_condition(&env, "web", "Degraded", "False", Some("AsExpected")).await;
}
