//! v0.6.1's CELLD_LTX_RETENTION_SECS reaches the nodes only once every node runs v0.6.1, and going back to v0.6.0 waits until no node has it.

use super::harness::*;
use crate::support::*;
use celld_fixtures::NodeDouble;
use serde_json::json;

#[tokio::test]
async fn v0_6_1_settings_wait_for_every_node_and_going_back_waits_until_no_node_has_them() {
    let nodes = NodeDouble::start("0.6.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-held", V60, 3, &nodes).await;

    // On v0.6.0 the setting is refused at admission.
    let refused = apply_web(&env, V60, json!([{"name": RETENTION, "value": "86400"}]))
        .await
        .expect_err("refused on v0.6.0");
    assert!(
        refused
            .to_string()
            .contains("CELLD_LTX_RETENTION_SECS is used from celld v0.6.1 on"),
        "{refused}"
    );

    // The image and the setting in one change: the nodes roll to v0.6.1 without it.
    apply_web(&env, V61, json!([{"name": RETENTION, "value": "86400"}]))
        .await
        .expect("admitted on v0.6.1");
    let held = wait_condition(&env, "web", "SettingsHeld", "True", Some("HeldForNodes")).await;
    let said = message(&held, "SettingsHeld");
    assert!(
        said.contains(
            "CELLD_LTX_RETENTION_SECS reaches the nodes once every node runs celld v0.6.1"
        ) && said.contains("not yet web-0"),
        "{said}"
    );
    assert_eq!(node_env(&env, "web", RETENTION).await, None, "held back");
    assert_eq!(condition(&env, "web", "Reconciling").await.status, "True");

    // Every node runs v0.6.1: then it reaches them.
    wait_condition(&env, "web", "SettingsHeld", "False", Some("SettingsInUse")).await;
    assert_eq!(
        node_env(&env, "web", RETENTION).await.as_deref(),
        Some("86400")
    );
    wait_serving(&env, V61, 3).await;

    // Back to v0.6.0, dropping the setting in the same change: the nodes first roll without it
    // on v0.6.1, and the image waits, saying why.
    apply_web(&env, V60, json!([])).await.expect("admitted");
    let waiting = wait_condition(
        &env,
        "web",
        "Progressing",
        "True",
        Some("WaitingForSettings"),
    )
    .await;
    let said = message(&waiting, "Progressing");
    assert!(
        said.contains("CELLD_LTX_RETENTION_SECS") && said.contains("every node"),
        "{said}"
    );
    assert_eq!(
        node_env(&env, "web", RETENTION).await,
        None,
        "dropped first"
    );
    wait_serving(&env, V60, 3).await;
    assert!(
        !has_event(&env, "web", "UpgradeRefused", None).await,
        "a rollback on its way is not a refusal"
    );
}
