//! Durability that loses no acknowledged write: a fleet that names none gets the one its work
//! storage keeps (bucket on Ephemeral, celld's fleet on Persistent); `fleet` on Ephemeral, asked
//! for, is admitted and said (DurabilityAtRisk=True, one Warning) until it is taken back.

use crate::support::*;
use celld_api::CelldFleet;
use kube::api::{Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

const V: &str = "00000000000000a1";

#[tokio::test]
async fn the_default_durability_keeps_acknowledged_writes_and_a_risky_one_is_said_once() {
    let (env, op) = env_with_operator("durability").await;
    deployed_fleet(&env, "risky", V, json!({"durability": "fleet"})).await;
    let fleet = wait_condition(
        &env,
        "risky",
        "DurabilityAtRisk",
        "True",
        Some("FleetDurabilityOnEphemeral"),
    )
    .await;
    let said = message(&fleet, "DurabilityAtRisk");
    assert!(
        said.contains("can lose acknowledged writes") && said.contains("spec.localStorage.type"),
        "{said}"
    );
    assert_eq!(
        node_env(&env, "risky", "CELLD_DURABILITY").await.as_deref(),
        Some("fleet"),
        "admitted as asked"
    );
    wait_condition(&env, "risky", "Ready", "True", None).await;
    wait_events(&env, "risky", "Warning", "FleetDurabilityOnEphemeral").await;
    // Later reconciles (the fleet is resynced every few seconds here) say nothing new.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        events(&env, "risky", "Warning", "FleetDurabilityOnEphemeral")
            .await
            .len(),
        1
    );

    // Taken back: the default of Ephemeral work storage.
    env.api::<CelldFleet>()
        .patch(
            "risky",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"durability": null}})),
        )
        .await
        .expect("spec.durability removed");
    wait_condition(
        &env,
        "risky",
        "DurabilityAtRisk",
        "False",
        Some("BucketDurability"),
    )
    .await;
    assert_eq!(
        node_env(&env, "risky", "CELLD_DURABILITY").await.as_deref(),
        Some("bucket")
    );

    // Persistent work storage keeps a follower's disk: celld's own default, left unset.
    let s3 = env.s3().expect("S3 settings");
    let kept = prefix(&s3, "kept");
    publish_pointer(&s3, &kept, V).await;
    let spec = json!({"localStorage": {"type": "Persistent"}});
    apply_fleet(
        &env,
        &inline_fleet("kept", &s3, &kept, spec).expect("a CelldFleet"),
    )
    .await;
    wait_condition(
        &env,
        "kept",
        "DurabilityAtRisk",
        "False",
        Some("PersistentWorkStorage"),
    )
    .await;
    assert_eq!(node_env(&env, "kept", "CELLD_DURABILITY").await, None);
    assert!(
        events(&env, "kept", "Warning", "FleetDurabilityOnEphemeral")
            .await
            .is_empty()
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
