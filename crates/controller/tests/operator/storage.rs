//! Storage through a shared CelldObjectStore: a missing store or Secret is reported and healed
//! when it appears; rotating the Secret's contents or moving the store rolls the nodes; the
//! bucket client of a deleted fleet is dropped. A rotation with the operator killed right after
//! it: resilience/rotation_kill.rs.

use crate::support::*;
use celld_api::CelldFleet;
use celld_api::CelldObjectStore;
use celld_testkit::wait_for_object;
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

fn config_hash(sts: &StatefulSet) -> Option<String> {
    sts.spec
        .as_ref()?
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(celld_api::labels::CONFIG_HASH)
        .cloned()
}

#[tokio::test]
async fn a_missing_store_is_reported_then_healed() {
    let (env, op) = env_with_operator("nostore").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "nostore");
    publish_pointer(&s3, &prefix, "00000000000000e1").await;
    let fleet = fleet(
        "shop",
        json!({"storeRef": {"name": "s3"}, "objectStorage": {"bucket": format!("s3://{}/{prefix}", s3.bucket)}}),
    ).expect("a valid CelldFleet");
    apply_fleet(&env, &fleet).await;

    let f = wait_condition(
        &env,
        "shop",
        "StorageResolved",
        "False",
        Some("StoreNotFound"),
    )
    .await;
    let c = celld_api::conditions::find(
        &f.status.as_ref().expect("status").conditions,
        "StorageResolved",
    )
    .expect("condition")
    .clone();
    assert!(
        c.message.contains("CelldObjectStore 's3'") && c.message.contains("create it"),
        "{}",
        c.message
    );
    wait_condition(&env, "shop", "Degraded", "True", Some("StoreNotFound")).await;
    assert!(
        env.api::<StatefulSet>()
            .get_opt("shop")
            .await
            .expect("read")
            .is_none(),
        "no pods with half a configuration"
    );
    wait_events(&env, "shop", "Warning", "StoreNotFound").await;

    env.api::<CelldObjectStore>()
        .create(
            &PostParams::default(),
            &celld_fixtures::store("s3", &s3, "creds").expect("a valid CelldObjectStore"),
        )
        .await
        .expect("store created");
    wait_condition(
        &env,
        "shop",
        "StorageResolved",
        "False",
        Some("SecretNotFound"),
    )
    .await;
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let f = wait_condition(&env, "shop", "Ready", "True", None).await;
    assert_eq!(
        f.status
            .and_then(|s| s.storage)
            .and_then(|s| s.store)
            .as_deref(),
        Some("s3")
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn a_secret_without_its_keys_is_reported() {
    let (env, op) = env_with_operator("nokey").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "nokey");
    let secret: Secret = serde_json::from_value(
        json!({"metadata": {"name": "creds"}, "stringData": {"AWS_ACCESS_KEY_ID": "x"}}),
    )
    .expect("Secret");
    env.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await
        .expect("Secret");
    apply_fleet(
        &env,
        &inline_fleet("keyless", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;
    let f = wait_condition(
        &env,
        "keyless",
        "StorageResolved",
        "False",
        Some("SecretKeyMissing"),
    )
    .await;
    let message = message(&f, "StorageResolved");
    assert!(message.contains("AWS_SECRET_ACCESS_KEY"), "{message}");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

/// Values the schema admits and no object-store client accepts (a host that reads as an IPv4
/// address and is not one, a key with a trailing newline) are reported on their fleet; the
/// operator goes on with the others.
#[tokio::test]
async fn values_no_store_client_accepts_are_reported_and_the_others_go_on() {
    let (env, op) = env_with_operator("badvalues").await;
    let s3 = env.s3().expect("S3 settings");
    // A prefix each (two fleets on one store may not share one).
    let prefix = prefix(&s3, "badvalues");
    for name in ["newline", "good"] {
        publish_pointer(&s3, &format!("{prefix}/{name}"), "00000000000000e7").await;
    }
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let newline: Secret = serde_json::from_value(json!({
        "metadata": {"name": "creds-newline"},
        "stringData": {"AWS_ACCESS_KEY_ID": format!("{}\n", s3.access_key_id), "AWS_SECRET_ACCESS_KEY": s3.secret_access_key},
    }))
    .expect("Secret");
    env.api::<Secret>()
        .create(&PostParams::default(), &newline)
        .await
        .expect("Secret");
    apply_fleet(
        &env,
        &inline_fleet(
            "badhost",
            &s3,
            &prefix,
            json!({"objectStorage": {"endpoint": "http://10.0.0.300:9000"}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
    apply_fleet(
        &env,
        &inline_fleet(
            "newline",
            &s3,
            &format!("{prefix}/newline"),
            json!({"objectStorage": {"credentialsSecretRef": {"name": "creds-newline"}}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;

    let f = wait_condition(
        &env,
        "badhost",
        "StorageResolved",
        "False",
        Some("InvalidEndpoint"),
    )
    .await;
    let resolved = message(&f, "StorageResolved");
    assert!(
        resolved.starts_with("spec.objectStorage sets spec.objectStorage.endpoint 'http://10.0.0.300:9000', which is not a valid URL"),
        "{resolved}"
    );
    wait_events(&env, "badhost", "Warning", "InvalidEndpoint").await;
    let f = wait_condition(
        &env,
        "newline",
        "Degraded",
        "True",
        Some("BucketUnreadable"),
    )
    .await;
    let degraded = message(&f, "Degraded");
    assert!(
        degraded.contains("the credentials Secret's key AWS_ACCESS_KEY_ID holds a line break"),
        "{degraded}"
    );

    apply_fleet(
        &env,
        &inline_fleet("good", &s3, &format!("{prefix}/good"), json!({}))
            .expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "good", "Ready", "True", None).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn rotating_credentials_or_moving_the_store_rolls_the_nodes() {
    // The nodes answer their state: the roll moves a node once none restores cells.
    let (env, _nodes, op) = env_with_nodes("rotate", "0.6.0", "00000000000000f1").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "rotate");
    publish_pointer(&s3, &prefix, "00000000000000f1").await;
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    env.api::<CelldObjectStore>()
        .create(
            &PostParams::default(),
            &celld_fixtures::store("s3", &s3, "creds").expect("a valid CelldObjectStore"),
        )
        .await
        .expect("store");
    apply_fleet(&env, &fleet("rolling", json!({"replicas": 2, "storeRef": {"name": "s3"}, "objectStorage": {"bucket": format!("s3://{}/{prefix}", s3.bucket)}})).expect("a valid CelldFleet")).await;
    wait_condition(&env, "rolling", "Ready", "True", None).await;
    let sts_api = env.api::<StatefulSet>();
    let first = config_hash(&sts_api.get("rolling").await.expect("sts")).expect("config hash");

    // Same key names, new contents (the test server accepts only its own credentials, so
    // add a session token: it is part of what the nodes read).
    let patch = json!({"stringData": {"AWS_SESSION_TOKEN": "rotated-token"}});
    env.api::<Secret>()
        .patch("creds", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("Secret rotated");
    let rotated = wait_for_object(
        &sts_api,
        "rolling",
        "a new config hash after the rotation",
        TIMEOUT,
        |s| config_hash(s).is_some_and(|h| h != first),
    )
    .await
    .expect("rotation rolls the pod template");
    let second = config_hash(&rotated).expect("hash");
    wait_for_object(
        &sts_api,
        "rolling",
        "every node on the new template",
        TIMEOUT,
        |s| {
            s.status.as_ref().is_some_and(|st| {
                st.updated_replicas == Some(2)
                    && st.ready_replicas == Some(2)
                    && st.current_revision == st.update_revision
            })
        },
    )
    .await
    .expect("pods rolled");

    // Moving the store (region) rolls again.
    let patch = json!({"spec": {"region": "eu-west-1"}});
    env.api::<CelldObjectStore>()
        .patch("s3", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("store moved");
    wait_for_object(
        &sts_api,
        "rolling",
        "a new config hash after the store changed",
        TIMEOUT,
        |s| config_hash(s).is_some_and(|h| h != second),
    )
    .await
    .expect("store change rolls the pod template");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

/// The bucket clients the operator holds, from its metrics.
fn s3_clients(op: &Operator) -> Option<u64> {
    op.metrics.encode().lines().find_map(|line| {
        line.strip_prefix("celld_operator_s3_clients ")?
            .parse()
            .ok()
    })
}

#[tokio::test]
async fn a_bucket_client_no_fleet_uses_any_more_is_dropped() {
    let (env, op) = env_with_operator("idleclient").await;
    let s3 = env.s3().expect("S3 settings");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let prefix = prefix(&s3, "idleclient");
    publish_pointer(&s3, &prefix, "00000000000000e1").await;
    apply_fleet(
        &env,
        &inline_fleet("app", &s3, &prefix, json!({})).expect("a valid CelldFleet"),
    )
    .await;
    wait_condition(&env, "app", "Deployed", "True", None).await;
    assert_eq!(s3_clients(&op), Some(1), "{}", op.metrics.encode());

    env.api::<CelldFleet>()
        .delete("app", &DeleteParams::default())
        .await
        .expect("fleet deleted");
    // The next housekeeping round after the fleet left the operator's cache.
    wait_until("the unused bucket client dropped", TIMEOUT, || async {
        match s3_clients(&op) {
            Some(0) => Check::Done(()),
            held => Check::Pending(format!("clients held: {held:?}")),
        }
    })
    .await
    .expect("the client of the deleted fleet's bucket dropped");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
