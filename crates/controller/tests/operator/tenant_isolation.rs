//! Tenant A cannot reach tenant B through the operator. Here: claim B's bucket prefix (the
//! same, one inside it, one containing it) or read B's deployment pointer through the
//! operator — A's fleet is `PrefixClaimed`, gets no nodes, shows no version of B's, and its
//! status names neither B's namespace nor B's fleet; an old fleet of A's edited onto B's prefix
//! does not take it over; once B's fleet is gone the prefix is free.
//!
//! The other ways in are tested beside the features they cross: take over B's objects
//! (`name_taken`: an object the fleet does not control is never adopted), get a Job or pod
//! into another namespace with the operator's identity (`guard`, and `namespaced_install`,
//! whose operator holds Roles in its watched namespaces only), read B's Secrets from the
//! operator's cache (`secret_metadata`: names and labels only).

use crate::operator_rbac::operator_watching_two;
use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::{S3Settings, TestEnv, TestNamespace};
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;
use std::time::Duration;

const B_VERSION: &str = "00000000000000b2";

/// Tenant A's namespace (the test's) and tenant B's, one operator watching both.
async fn two_tenants(test: &str) -> (TestEnv, TestNamespace, Operator) {
    let env = env_with_crds(test).await;
    let b = TestNamespace::create(&env.client(), "tenant-b")
        .await
        .expect("tenant B's namespace");
    let op = operator_watching_two(&env, b.name()).await;
    (env, b, op)
}

/// Tenant B's fleet `shop` on `prefix` in namespace `b`, Ready and serving B's version.
async fn tenant_b(
    admin: &Client,
    b: &TestNamespace,
    s3: &S3Settings,
    prefix: &str,
) -> Api<CelldFleet> {
    create_credentials(&Api::namespaced(admin.clone(), b.name()), "creds", s3)
        .await
        .expect("B's credentials");
    publish_pointer(s3, prefix, B_VERSION).await;
    let fleets = Api::<CelldFleet>::namespaced(admin.clone(), b.name());
    let fleet = inline_fleet("shop", s3, prefix, json!({})).expect("B's fleet");
    fleets
        .create(&PostParams::default(), &fleet)
        .await
        .expect("B's fleet created");
    wait_condition_in(&fleets, "shop", "Ready", "True", None).await;
    fleets
}

/// Applies tenant A's fleet `name` on `prefix` in A's namespace (the test's).
async fn tenant_a_fleet(env: &TestEnv, s3: &S3Settings, name: &str, prefix: &str) {
    apply_fleet(
        env,
        &inline_fleet(name, s3, prefix, json!({})).expect("A's fleet"),
    )
    .await;
}

/// Asserts that A's fleet `name` is refused the prefix and learnt nothing of B's.
async fn refused(env: &TestEnv, name: &str, b_namespace: &str) {
    let fleet = wait_condition(env, name, "Degraded", "True", Some("PrefixClaimed")).await;
    let said = message(&fleet, "Degraded");
    assert!(said.contains("created before this one"), "{said}");
    // The message repeats A's own bucket (which A wrote, B's prefix in it) and nothing of B's.
    let own = fleet.spec.object_storage.bucket.clone();
    let others = said.replace(&own, "");
    assert!(
        !others.contains(b_namespace) && !others.contains("shop"),
        "names tenant B: {said}"
    );
    let status = fleet.status.clone().expect("status");
    assert!(
        status.deployment.is_none(),
        "B's pointer read for A: {:?}",
        status.deployment
    );
    assert!(
        !serde_json::to_string(&status)
            .expect("status as JSON")
            .contains(B_VERSION),
        "B's version shown to A"
    );
    assert!(
        env.api::<StatefulSet>()
            .get_opt(name)
            .await
            .expect("read")
            .is_none(),
        "A's fleet {name} got nodes on B's prefix"
    );
    assert!(
        has_event(env, name, "PrefixClaimed", Some("Warning")).await,
        "one Warning Event says so"
    );
}

#[tokio::test]
async fn tenant_a_cannot_claim_or_read_tenant_b_s_prefix() {
    let (env, b, _op) = two_tenants("tenant-a").await;
    let admin = env.client();
    let s3 = env.s3().expect("S3 settings");
    let b_prefix = format!("{}/shop", prefix(&s3, "tenant-b"));
    let b_fleets = tenant_b(&admin, &b, &s3, &b_prefix).await;
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("A's credentials");

    // The same prefix, one inside it and one holding it.
    let parent = b_prefix
        .rsplit_once('/')
        .map(|(p, _)| p.to_string())
        .expect("a parent");
    for (name, prefix) in [
        ("same", b_prefix.clone()),
        ("inside", format!("{b_prefix}/deploy")),
        ("around", parent),
    ] {
        tenant_a_fleet(&env, &s3, name, &prefix).await;
        refused(&env, name, b.name()).await;
    }

    // B keeps serving, untouched.
    let shop = b_fleets.get("shop").await.expect("B's fleet");
    assert_eq!(
        shop.status
            .and_then(|s| s.deployment)
            .map(|d| d.version)
            .as_deref(),
        Some(B_VERSION)
    );

    // Once B's fleet is gone, the prefix is A's to take.
    b_fleets
        .delete("shop", &DeleteParams::default())
        .await
        .expect("B's fleet deleted");
    for name in ["inside", "around"] {
        env.api::<CelldFleet>()
            .delete(name, &DeleteParams::default())
            .await
            .expect("deleted");
    }
    wait_condition(&env, "same", "Ready", "True", None).await;
    b.cleanup().await.expect("tenant B's namespace deleted");
}

#[tokio::test]
async fn an_old_fleet_moved_onto_a_younger_fleet_s_prefix_does_not_take_it() {
    let (env, b, _op) = two_tenants("tenant-move").await;
    let admin = env.client();
    let s3 = env.s3().expect("S3 settings");
    // A's fleet is the older one: Ready on a prefix of its own first.
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("A's credentials");
    let a_prefix = format!("{}/old", prefix(&s3, "tenant-move"));
    publish_pointer(&s3, &a_prefix, "00000000000000a1").await;
    tenant_a_fleet(&env, &s3, "old", &a_prefix).await;
    wait_condition(&env, "old", "Ready", "True", None).await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let b_prefix = format!("{}/shop", prefix(&s3, "tenant-move-b"));
    let b_fleets = tenant_b(&admin, &b, &s3, &b_prefix).await;

    // A moves its old fleet onto B's prefix: its claim is as old as the move.
    env.api::<CelldFleet>()
        .patch(
            "old",
            &PatchParams::apply("kubectl-test"),
            &Patch::Merge(json!({"spec": {"objectStorage": {"bucket": format!("s3://{}/{b_prefix}", s3.bucket)}}})),
        )
        .await
        .expect("A's fleet moved");
    let fleet = wait_condition(&env, "old", "Degraded", "True", Some("PrefixClaimed")).await;
    assert!(!message(&fleet, "Degraded").contains(b.name()));
    let shop = wait_condition_in(&b_fleets, "shop", "Ready", "True", None).await;
    assert!(
        shop.status
            .and_then(|s| s.conditions.into_iter().find(|c| c.type_ == "Degraded"))
            .is_none_or(|c| c.status == "False"),
        "B keeps its prefix"
    );
    b.cleanup().await.expect("tenant B's namespace deleted");
}
