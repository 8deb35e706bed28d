//! A child the API server refuses leaves the other children applied and the fleet Degraded with
//! one Warning Event until the cause is fixed.

use crate::support::*;
use celld_api::reasons::Reason;
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ResourceQuota, Service};
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

/// Whether the object `name` exists.
async fn present<K>(api: &Api<K>, name: &str) -> kube::Result<bool>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get_opt(name).await.map(|o| o.is_some())
}

#[tokio::test]
async fn a_refused_child_is_reported_once_and_the_others_still_applied() {
    let (env, op) = env_with_operator("refused").await;
    // A quota of zero StatefulSets: the API server refuses the first child the operator applies.
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": {"name": "no-statefulsets"},
        "spec": {"hard": {"count/statefulsets.apps": "0"}},
    }))
    .expect("ResourceQuota");
    let quotas = env.api::<ResourceQuota>();
    quotas
        .create(&PostParams::default(), &quota)
        .await
        .expect("quota created");
    // Until the quota controller has counted, the API server refuses with another message.
    wait_until("the quota counted", TIMEOUT, || async {
        match quotas.get("no-statefulsets").await {
            Ok(q) if q.status.as_ref().and_then(|s| s.hard.as_ref()).is_some() => Check::Done(()),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("quota status");

    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "refused");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000a8").await;
    apply_fleet(
        &env,
        &inline_fleet(
            "capped",
            &s3,
            &prefix,
            json!({"ingress": {"hostname": "capped.example.com", "ingressClass": "nginx"}}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;

    let fleet = wait_condition(&env, "capped", "Degraded", "True", Some("ChildRejected")).await;
    let conditions = fleet.status.expect("status").conditions;
    let find = |t: &str| celld_api::conditions::find(&conditions, t).expect("condition");
    let degraded = find("Degraded");
    assert!(
        degraded.message.contains("StatefulSet capped")
            && degraded.message.contains("exceeded quota: no-statefulsets"),
        "the message names the child and quotes the API server: {}",
        degraded.message
    );
    let ready = find("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "ChildRejected")
    );
    // The status is written after every child was tried: the others exist already.
    let exists = [
        (
            "Service capped",
            present(&env.api::<Service>(), "capped").await,
        ),
        (
            "Service capped-peer",
            present(&env.api::<Service>(), "capped-peer").await,
        ),
        (
            "NetworkPolicy",
            present(&env.api::<NetworkPolicy>(), "capped").await,
        ),
        (
            "PodDisruptionBudget",
            present(&env.api::<PodDisruptionBudget>(), "capped").await,
        ),
        ("Ingress", present(&env.api::<Ingress>(), "capped").await),
    ];
    for (what, found) in exists {
        assert!(
            found.as_ref().is_ok_and(|f| *f),
            "{what} applied next to the refused StatefulSet: {found:?}; Degraded: {}",
            degraded.message
        );
    }

    // The operator retries; the same failure publishes no new Event.
    let failed = op.metrics.failures(Reason::ChildRejected);
    wait_until("two more refused retries", TIMEOUT, || async {
        let n = op.metrics.failures(Reason::ChildRejected);
        if n >= failed + 2 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n} refusals counted"))
        }
    })
    .await
    .expect("retries counted by reason");
    let warnings = events(&env, "capped", "Warning", "ChildRejected").await;
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].count.unwrap_or(1) == 1 && warnings[0].series.is_none(),
        "published once, not repeated: {:#?}",
        warnings[0]
    );
    assert!(
        warnings[0]
            .message
            .as_deref()
            .is_some_and(|m| m.contains("StatefulSet capped")),
        "{:?}",
        warnings[0].message
    );
    assert!(
        op.metrics
            .encode()
            .contains("celld_operator_reconcile_errors_total{reason=\"ChildRejected\"}")
    );

    quotas
        .delete("no-statefulsets", &DeleteParams::default())
        .await
        .expect("quota deleted");
    wait_condition(&env, "capped", "Degraded", "False", Some("AsExpected")).await;
    Api::<StatefulSet>::namespaced(env.client(), env.namespace())
        .get("capped")
        .await
        .expect("StatefulSet applied once the quota is gone");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
