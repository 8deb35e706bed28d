//! The namespace-scoped install: an operator watching two namespaces (`--namespaces a,b`),
//! holding only the Role of install-watched-namespace.yaml in each (no ClusterRole at all),
//! reconciles the fleets of both, and a fleet in a third namespace gets nothing: no child, no
//! status, no Event; the second namespace gets its deploy Jobs and previews too.

use crate::operator_rbac::operator_watching_two;
use crate::support::*;
use celld_api::CelldFleet;
use celld_testkit::TestNamespace;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::time::Duration;

const VERSION: &str = "00000000000000a1";

/// A fleet `web` with an Ingress in `ns`, its credentials and its pointer.
async fn fleet_in(admin: &Client, s3: &celld_testkit::S3Settings, ns: &str) {
    let prefix = prefix(s3, ns);
    create_credentials(&Api::namespaced(admin.clone(), ns), "creds", s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(s3, &prefix, VERSION).await;
    let mut fleet = inline_fleet(
        "web",
        s3,
        &prefix,
        json!({"ingress": {"hostname": format!("{ns}.example.com"), "ingressClass": "nginx"}}),
    )
    .expect("a CelldFleet");
    fleet.metadata.namespace = Some(ns.to_string());
    Api::<CelldFleet>::namespaced(admin.clone(), ns)
        .create(&Default::default(), &fleet)
        .await
        .expect("fleet created");
}

#[tokio::test]
async fn two_watched_namespaces_are_served_and_a_third_gets_nothing() {
    let env = env_with_crds("ns-install-a").await;
    let admin = env.client();
    let b = TestNamespace::create(&admin, "ns-install-b")
        .await
        .expect("namespace b");
    let unlisted = TestNamespace::create(&admin, "ns-install-c")
        .await
        .expect("namespace c");
    let a = env.namespace().to_string();
    let s3 = env.s3().expect("S3 settings");
    // The operator's ServiceAccount lives in a, holds the Lease Role there, and a watched
    // namespace's Role in a and in b: nothing cluster-wide.
    let _op = operator_watching_two(&env, b.name()).await;

    for ns in [a.as_str(), b.name(), unlisted.name()] {
        fleet_in(&admin, &s3, ns).await;
    }
    wait_condition(&env, "web", "Ready", "True", None).await;
    let in_b = Api::<CelldFleet>::namespaced(admin.clone(), b.name());
    wait_condition_in(&in_b, "web", "Ready", "True", None).await;
    for ns in [a.as_str(), b.name()] {
        for (kind, found) in [
            (
                "StatefulSet",
                Api::<StatefulSet>::namespaced(admin.clone(), ns)
                    .get_opt("web")
                    .await
                    .expect("read")
                    .is_some(),
            ),
            (
                "Service",
                Api::<Service>::namespaced(admin.clone(), ns)
                    .get_opt("web-peer")
                    .await
                    .expect("read")
                    .is_some(),
            ),
            (
                "Ingress",
                Api::<Ingress>::namespaced(admin.clone(), ns)
                    .get_opt("web")
                    .await
                    .expect("read")
                    .is_some(),
            ),
            (
                "NetworkPolicy",
                Api::<NetworkPolicy>::namespaced(admin.clone(), ns)
                    .get_opt("web")
                    .await
                    .expect("read")
                    .is_some(),
            ),
        ] {
            assert!(found, "{kind} web of {ns}");
        }
    }

    // Several resyncs later, the unlisted namespace's fleet is as its author left it.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let ns = unlisted.name();
    let fleet = Api::<CelldFleet>::namespaced(admin.clone(), ns)
        .get("web")
        .await
        .expect("the unlisted fleet");
    assert!(fleet.status.is_none(), "status written: {:?}", fleet.status);
    assert!(
        fleet
            .managed_fields()
            .iter()
            .all(|m| m.manager.as_deref() != Some("celld-operator")),
        "the operator wrote the unlisted fleet"
    );
    let lp = ListParams::default();
    for (kind, count) in [
        (
            "StatefulSets",
            Api::<StatefulSet>::namespaced(admin.clone(), ns)
                .list(&lp)
                .await
                .expect("listed")
                .items
                .len(),
        ),
        (
            "Services",
            Api::<Service>::namespaced(admin.clone(), ns)
                .list(&lp)
                .await
                .expect("listed")
                .items
                .len(),
        ),
        (
            "Events",
            Api::<Event>::namespaced(admin.clone(), ns)
                .list(&lp)
                .await
                .expect("listed")
                .items
                .len(),
        ),
    ] {
        assert_eq!(count, 0, "{kind} in the unlisted namespace");
    }
    b.cleanup().await.expect("namespace b deleted");
    unlisted.cleanup().await.expect("namespace c deleted");
}

#[tokio::test]
async fn the_second_namespace_gets_its_deploy_jobs_and_previews() {
    let env = env_with_crds("ns-install-jobs").await;
    let admin = env.client();
    let b = TestNamespace::create(&admin, "ns-install-jobs-b")
        .await
        .expect("namespace b");
    let _op = operator_watching_two(&env, b.name()).await;
    let s3 = env.s3().expect("S3 settings");
    let ns = b.name();
    let prefix = prefix(&s3, ns);
    for secret in ["creds", "previews-creds"] {
        create_credentials(&Api::namespaced(admin.clone(), ns), secret, &s3)
            .await
            .expect("credentials Secret created");
    }
    publish_pointer(&s3, &prefix, VERSION).await;
    let mut fleet = inline_fleet(
        "web",
        &s3,
        &prefix,
        json!({
            "image": "ghcr.io/denoland/celld:v0.6.0",
            "source": {"image": {"reference": "registry.invalid/acme/web-worker:1@sha256:1111111111111111111111111111111111111111111111111111111111111111"}},
            "previews": {
                "baseDomain": "preview.example.com",
                "bucket": format!("s3://{}/{prefix}-previews", s3.bucket),
                "ingressClass": "nginx",
                "ttl": "1h",
                "maxTtl": "2h",
                "credentials": {"credentialsSecretRef": {"name": "previews-creds"}},
            },
        }),
    )
    .expect("a CelldFleet");
    fleet.metadata.namespace = Some(ns.to_string());
    let fleets = Api::<CelldFleet>::namespaced(admin.clone(), ns);
    fleets
        .create(&Default::default(), &fleet)
        .await
        .expect("fleet created");
    let preview: celld_api::CelldPreview = serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldPreview",
        "metadata": {"name": "pr-1", "namespace": ns},
        "spec": {"fleet": "web"},
    }))
    .expect("a CelldPreview");
    Api::<celld_api::CelldPreview>::namespaced(admin.clone(), ns)
        .create(&Default::default(), &preview)
        .await
        .expect("preview created");

    let jobs = Api::<Job>::namespaced(admin.clone(), ns);
    let selector = format!("{}=web", celld_api::labels::FLEET);
    celld_testkit::wait_until("a deploy Job of web in b", TIMEOUT, || async {
        match jobs.list(&ListParams::default().labels(&selector)).await {
            Ok(list) if !list.items.is_empty() => celld_testkit::Check::Done(()),
            other => celld_testkit::Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("the operator ran the fleet's deploy Job in the second namespace");
    let statefulsets = Api::<StatefulSet>::namespaced(admin.clone(), ns);
    celld_testkit::wait_until("the preview's nodes in b", TIMEOUT, || async {
        match statefulsets.get_opt("pr-1").await {
            Ok(Some(_)) => celld_testkit::Check::Done(()),
            other => celld_testkit::Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("the preview's fleet got its nodes in the second namespace");
    b.cleanup().await.expect("namespace b deleted");
}
