//! A fleet asking for gatewayRefs on a cluster that does not serve the Gateway API: the second
//! local control plane, started without its CRDs (`make cluster-up-bare`; `make test` starts it).
//! The operator runs as the cluster's admin here: what this test proves is the condition, and
//! the other tests run it under the generated RBAC.

use crate::support::*;
use celld_api::CelldFleet;
use celld_operator::cache::watch_scope::WatchScope;
use celld_operator::shared::settings::Settings;
use celld_testkit::{Check, S3Settings, TestNamespace, config_from, paths, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn gateway_refs_without_the_gateway_api_get_a_clear_condition() {
    let dir = paths::workspace_root().join(".testenv-bare");
    let config = config_from(&dir.join("kubeconfig"))
        .await
        .expect("the control plane without Gateway API is up (make cluster-up-bare)");
    let admin = Client::try_from(config).expect("client");
    let ns = TestNamespace::create(&admin, "nogateway")
        .await
        .expect("namespace");
    celld_testkit::install_crds(&admin)
        .await
        .expect("CRDs installed");
    let s3 = S3Settings::from_file(&dir.join("s3.env")).expect("S3 settings of that control plane");
    let prefix = prefix(&s3, "nogateway");
    publish_pointer(&s3, &prefix, "0000000000000301").await;

    create_credentials(&Api::namespaced(admin.clone(), ns.name()), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let fleet = inline_fleet(
        "gw",
        &s3,
        &prefix,
        json!({"ingress": {"hostname": "gw.example.com", "gatewayRefs": [{"name": "edge"}]}}),
    )
    .expect("a valid CelldFleet");
    let fleets: Api<CelldFleet> = Api::namespaced(admin.clone(), ns.name());
    fleets
        .patch(
            "gw",
            &PatchParams::apply("kubectl-test").force(),
            &Patch::Apply(&fleet),
        )
        .await
        .expect("fleet applied");
    // And one following a Flux source, on a cluster without Flux either.
    let sourced = inline_fleet(
        "flux",
        &s3,
        &crate::support::prefix(&s3, "noflux"),
        json!({"source": {"sourceRef": {"kind": "OCIRepository", "name": "web"}}}),
    )
    .expect("a valid CelldFleet");
    fleets
        .patch(
            "flux",
            &PatchParams::apply("kubectl-test").force(),
            &Patch::Apply(&sourced),
        )
        .await
        .expect("fleet applied");

    let op = start(
        admin.clone(),
        Settings {
            namespaces: WatchScope::one(ns.name()),
            resync: Duration::from_secs(2),
            pending_resync: Duration::from_secs(1),
            s3_timeout: Duration::from_secs(3),
            reporter: "celld-operator".into(),
            instance: Some("op-bare".into()),
            ..Settings::default()
        },
    );
    let fleets = &fleets;
    let status = wait_until(
        "RouteReady=False GatewayAPIMissing",
        TIMEOUT,
        || async move {
            let status = fleets.get("gw").await.ok().and_then(|f| f.status);
            let hit = status.as_ref().is_some_and(|s| {
                s.conditions.iter().any(|c| {
                    c.type_ == "RouteReady"
                        && c.status == "False"
                        && c.reason == "GatewayAPIMissing"
                })
            });
            if hit {
                Check::Done(status)
            } else {
                Check::Pending(format!("{status:?}"))
            }
        },
    )
    .await
    .expect("the missing Gateway API is reported");
    let status = status.expect("status");
    let condition = |t: &str| {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == t)
            .cloned()
            .expect("condition")
    };
    assert!(
        condition("RouteReady")
            .message
            .contains("install the Gateway API CRDs")
    );
    assert_eq!(
        (
            condition("Degraded").status.as_str(),
            condition("Degraded").reason.as_str()
        ),
        ("True", "GatewayAPIMissing")
    );
    assert_eq!(condition("Ready").reason, "RouteNotReady");
    // The nodes still run: only the route is missing.
    let sts = Api::<StatefulSet>::namespaced(admin.clone(), ns.name())
        .get("gw")
        .await
        .expect("StatefulSet");
    assert_eq!(sts.spec.and_then(|s| s.replicas), Some(2));

    let stalled = wait_until("the missing Flux reported", TIMEOUT, || async move {
        let status = fleets.get("flux").await.ok().and_then(|f| f.status);
        let stalled = status.as_ref().and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == "Stalled" && c.status == "True")
                .cloned()
        });
        match stalled {
            Some(c) if c.reason == "SourceNotFound" => Check::Done(c),
            _ => Check::Pending(format!("{status:?}")),
        }
    })
    .await
    .expect("the missing Flux is reported");
    assert!(
        stalled
            .message
            .contains("does not serve ocirepositories.source.toolkit.fluxcd.io"),
        "{}",
        stalled.message
    );
    op.stop().await;
    ns.cleanup().await.expect("cleanup");
}
