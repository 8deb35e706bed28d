//! Never adopt: objects that already have the names of a fleet's children, and that the fleet
//! does not control, are left as they are (no field, label or owner reference of the
//! operator's); the fleet is Degraded and Stalled with NameTaken naming each, with one Warning
//! per object; a name freed is taken up at the next reconcile; deleting the fleet leaves the
//! objects that were never its own.

use crate::support::*;
use celld_api::CelldFleet;
use celld_operator::children::MANAGER;
use celld_testkit::{Check, wait_for_deletion, wait_for_object, wait_until};
use gateway_api::httproutes::HttpRoute;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;
use std::fmt::Debug;

/// Creates `object` (JSON) as kind `K` in the test namespace; returns it as created.
async fn create<K>(env: &celld_testkit::TestEnv, object: serde_json::Value) -> K
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + Debug,
{
    let object: K = serde_json::from_value(object).expect("a valid object");
    env.api::<K>()
        .create(&PostParams::default(), &object)
        .await
        .expect("foreign object created")
}

/// The platform's label on every foreign object.
fn labels() -> serde_json::Value {
    json!({"team": "platform", "app.kubernetes.io/managed-by": "helm"})
}

/// Asserts the object `before` is still there and the operator never wrote to it: no field of
/// its field manager, no owner reference, the platform's labels.
async fn untouched<K>(api: &Api<K>, before: &K)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    let name = before.name_any();
    let now = api
        .get(&name)
        .await
        .expect("the foreign object is still there");
    let kind = K::kind(&());
    assert!(
        now.managed_fields()
            .iter()
            .all(|f| f.manager.as_deref() != Some(MANAGER)),
        "{kind} {name} has fields of the operator: {:?}",
        now.managed_fields()
    );
    assert!(now.owner_references().is_empty(), "{kind} {name}: {now:?}");
    assert_eq!(
        now.labels().get("team").map(String::as_str),
        Some("platform"),
        "{kind} {name}"
    );
}

#[tokio::test]
async fn objects_with_a_childs_name_are_never_adopted() {
    let (env, op) = env_with_operator("name-taken").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "name-taken");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000b1").await;
    // The second fleet's own prefix: two fleets may not share one.
    let routed_prefix = format!("{prefix}-routed");
    publish_pointer(&s3, &routed_prefix, "00000000000000b1").await;

    // A platform's objects, with the names the fleet `taken` would give its children.
    let selector = json!({"matchLabels": {"app": "other"}});
    let policy: NetworkPolicy = create(
        &env,
        json!({
            "metadata": {"name": "taken", "labels": labels()},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
        }),
    )
    .await;
    let peer: Service = create(
        &env,
        json!({
            "metadata": {"name": "taken-peer", "labels": labels()},
            "spec": {"selector": {"app": "other"}, "ports": [{"name": "x", "port": 9999}]},
        }),
    )
    .await;
    let statefulset: StatefulSet = create(&env, json!({
        "metadata": {"name": "taken", "labels": labels()},
        "spec": {"replicas": 0, "serviceName": "other", "selector": selector,
            "template": {"metadata": {"labels": {"app": "other"}},
                "spec": {"containers": [{"name": "other", "image": "registry.invalid/other:1"}]}}},
    })).await;
    let public: Service = create(
        &env,
        json!({
            "metadata": {"name": "taken", "labels": labels()},
            "spec": {"selector": {"app": "other"}, "ports": [{"name": "x", "port": 9998}]},
        }),
    )
    .await;
    let budget: PodDisruptionBudget = create(
        &env,
        json!({
            "metadata": {"name": "taken", "labels": labels()},
            "spec": {"minAvailable": 1, "selector": selector},
        }),
    )
    .await;
    let ingress: Ingress = create(
        &env,
        json!({
            "metadata": {"name": "taken", "labels": labels()},
            "spec": {"rules": [{"host": "other.example.com"}]},
        }),
    )
    .await;
    let route: HttpRoute = create(
        &env,
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "routed", "labels": labels()},
            "spec": {"hostnames": ["other.example.com"]},
        }),
    )
    .await;

    apply_fleet(
        &env,
        &inline_fleet(
            "taken",
            &s3,
            &prefix,
            json!({"replicas": 2, "ingress": {"hostname": "taken.example.com", "ingressClass": "nginx"}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
    apply_fleet(
        &env,
        &inline_fleet(
            "routed",
            &s3,
            &routed_prefix,
            json!({"ingress": {"hostname": "routed.example.com", "gatewayRefs": [{"name": "edge"}]}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;

    // Each object named, with whose it is and what to do.
    let ns = env.namespace().to_string();
    let fleet = wait_condition(&env, "taken", "Degraded", "True", Some("NameTaken")).await;
    let degraded = message(&fleet, "Degraded");
    for subject in [
        "NetworkPolicy taken",
        "Service taken-peer",
        "StatefulSet taken",
        "Service taken",
        "PodDisruptionBudget taken",
        "Ingress taken",
    ] {
        let sentence = format!(
            "{subject} already exists in namespace {ns} and is not this fleet's (it is managed by helm and has no controller), so the operator leaves it alone"
        );
        assert!(
            degraded.contains(&sentence),
            "no {sentence:?} in {degraded}"
        );
    }
    assert!(degraded.contains("delete or rename that"), "{degraded}");
    let stalled = condition(&env, "taken", "Stalled").await;
    assert_eq!(
        (stalled.status.as_str(), stalled.reason.as_str()),
        ("True", "NameTaken")
    );
    let routed = wait_condition(&env, "routed", "Degraded", "True", Some("NameTaken")).await;
    assert!(
        message(&routed, "Degraded").contains("HTTPRoute routed already exists"),
        "{}",
        message(&routed, "Degraded")
    );
    let warnings = wait_until("six NameTaken Warnings", TIMEOUT, || async {
        match events(&env, "taken", "Warning", "NameTaken").await {
            found if found.len() >= 6 => Check::Done(found),
            found => Check::Pending(format!("{found:#?}")),
        }
    })
    .await
    .expect("one Warning per object");
    assert_eq!(warnings.len(), 6, "one Warning per object: {warnings:#?}");

    untouched(&env.api::<NetworkPolicy>(), &policy).await;
    untouched(&env.api::<Service>(), &peer).await;
    untouched(&env.api::<StatefulSet>(), &statefulset).await;
    untouched(&env.api::<Service>(), &public).await;
    untouched(&env.api::<PodDisruptionBudget>(), &budget).await;
    untouched(&env.api::<Ingress>(), &ingress).await;
    untouched(&env.api::<HttpRoute>(), &route).await;

    // A name freed is the fleet's at its next reconcile.
    env.api::<Ingress>()
        .delete("taken", &DeleteParams::default())
        .await
        .expect("foreign Ingress deleted");
    let uid = fleet.uid().expect("uid");
    wait_for_object(
        &env.api::<Ingress>(),
        "taken",
        "the fleet's own Ingress",
        TIMEOUT,
        |i| i.owner_references().iter().any(|o| o.uid == uid),
    )
    .await
    .expect("the fleet's Ingress");

    // Deleting the fleet takes its own Ingress and leaves what was never its own.
    env.api::<CelldFleet>()
        .delete("taken", &DeleteParams::foreground())
        .await
        .expect("fleet deleted");
    wait_for_deletion(&env.api::<CelldFleet>(), "taken", TIMEOUT)
        .await
        .expect("fleet gone");
    wait_for_deletion(&env.api::<Ingress>(), "taken", TIMEOUT)
        .await
        .expect("its own Ingress collected");
    untouched(&env.api::<NetworkPolicy>(), &policy).await;
    untouched(&env.api::<Service>(), &peer).await;
    untouched(&env.api::<StatefulSet>(), &statefulset).await;
    untouched(&env.api::<Service>(), &public).await;
    untouched(&env.api::<PodDisruptionBudget>(), &budget).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
