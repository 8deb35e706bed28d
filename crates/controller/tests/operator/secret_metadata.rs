//! The operator's cache of Secrets keeps their names, labels and resourceVersion, never their
//! annotations: a Secret created the way `kubectl apply` creates it carries its values in
//! `kubectl.kubernetes.io/last-applied-configuration`, and no tenant's Secret value may sit in
//! the memory of the operator every tenant shares.

use crate::support::*;
use celld_operator::cache::health::{WatchHealth, WatchSettings};
use celld_operator::cache::streams::WatchStreams;
use celld_operator::cache::watch_scope::WatchScope;
use celld_operator::metrics::Metrics;
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::core::v1::Secret;
use kube::api::PostParams;
use kube::runtime::watcher;
use std::sync::Arc;

const VALUE: &str = "plaintext-value-0f9e8d7c";

#[tokio::test]
async fn cached_secrets_keep_no_annotation_and_no_value() {
    let env = env_with_crds("secret-metadata").await;
    let applied = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "tenant-db", "namespace": env.namespace()},
        "stringData": {"password": VALUE},
    });
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": "tenant-db",
            "labels": {"team": "payments"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied.to_string()},
        },
        "stringData": {"password": VALUE},
    }))
    .expect("a Secret");
    env.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await
        .expect("the Secret created as kubectl apply does");

    // The operator's own watch of Secrets, as its wiring starts it, with its identity.
    let client = operator_client(&env).await;
    let health = Arc::new(WatchHealth::new(
        WatchSettings::default(),
        Arc::new(Metrics::default()),
    ));
    let streams = WatchStreams::new(client, WatchScope::one(env.namespace()), health);
    let (store, _first, _second) = streams.cached_secrets("Secret", watcher::Config::default());
    let cached = wait_until("the Secret cached", TIMEOUT, || {
        let found = store
            .state()
            .into_iter()
            .find(|s| s.metadata.name.as_deref() == Some("tenant-db"));
        async move {
            match found {
                Some(s) => Check::Done(s),
                None => Check::Pending("not cached yet".into()),
            }
        }
    })
    .await
    .expect("cached");
    assert_eq!(
        cached
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("team"))
            .map(String::as_str),
        Some("payments"),
        "labels are kept"
    );
    assert!(cached.metadata.resource_version.is_some());
    assert_eq!(cached.metadata.annotations, None, "0 cached annotations");
    assert_eq!(cached.metadata.managed_fields, None);
    let everything: String = store.state().iter().map(|s| format!("{s:?}")).collect();
    assert!(
        !everything.contains(VALUE),
        "a Secret's value is in the operator's cache: {everything}"
    );
    env.cleanup().await.expect("cleanup");
}
