//! A leader that can no longer read or renew its Lease (its Lease permissions are revoked; an API
//! server that refuses only those requests looks the same to it) cannot learn that it lost it:
//! its Lease task only sees errors. Everything else still works for it, so it keeps reconciling,
//! and a fleet change makes it want to write. The fence must stop those writes once the renewal
//! is overdue, before another replica could take the Lease; the second replica then takes over.

use crate::support::*;
use celld_operator::cache::watch_scope::WatchScope;
use celld_operator::leadership::lease_fence::Leader;
use celld_operator::metrics::Metrics;
use celld_operator::runtime::run::run;
use celld_operator::shared::settings::Settings;
use celld_testkit::{Check, config_from, service_account_token, wait_until};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::Client;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::config::AuthInfo;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::sync::oneshot;

/// Seconds the Lease stays valid after a renewal.
const LEASE_SECONDS: u64 = 3;

/// Grants the service account `name` the operator's rules in the test namespace, and its Lease
/// rules through the RoleBinding `<name>-lease`; returns a client that authenticates as it.
async fn operator_account(plane: &Plane, name: &str) -> Client {
    let pp = PatchParams::apply("faults-test").force();
    let grants = [
        (
            format!("{name}-operator"),
            celld_operator::rbac::cluster_rules(),
        ),
        (
            format!("{name}-lease"),
            celld_operator::rbac::namespace_rules(),
        ),
    ];
    for (grant, rules) in grants {
        let role = Role {
            metadata: kube::api::ObjectMeta {
                name: Some(grant.clone()),
                ..Default::default()
            },
            rules: Some(rules),
        };
        plane
            .api::<Role>()
            .patch(&grant, &pp, &Patch::Apply(&role))
            .await
            .expect("Role");
        let binding: RoleBinding = serde_json::from_value(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": grant},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": grant},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": plane.ns}],
        }))
        .expect("RoleBinding");
        plane
            .api::<RoleBinding>()
            .patch(&grant, &pp, &Patch::Apply(&binding))
            .await
            .expect("RoleBinding");
    }
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("ServiceAccount");
    plane
        .api::<ServiceAccount>()
        .patch(name, &pp, &Patch::Apply(&account))
        .await
        .expect("ServiceAccount");
    let token = service_account_token(&plane.admin, &plane.ns, name)
        .await
        .expect("token");
    let mut config = config_from(&plane.kubeconfig()).await.expect("kubeconfig");
    config.auth_info = AuthInfo {
        token: Some(token.into()),
        ..AuthInfo::default()
    };
    Client::try_from(config).expect("client")
}

/// An operator replica in this process; its metrics say whether it leads and what it wrote.
struct Replica {
    metrics: Arc<Metrics>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), celld_operator::runtime::run::RunError>>,
}

fn replica(plane: &Plane, client: Client, identity: &str) -> Replica {
    let settings = Settings {
        namespaces: WatchScope::one(&plane.ns),
        resync: Duration::from_secs(1),
        pending_resync: Duration::from_secs(1),
        s3_timeout: Duration::from_secs(3),
        reporter: "celld-operator".into(),
        instance: Some(identity.into()),
        ..Settings::default()
    };
    let leader = Leader {
        namespace: plane.ns.clone(),
        lease: "celld-operator".into(),
        identity: identity.into(),
        duration_seconds: LEASE_SECONDS,
    };
    let metrics = Arc::new(Metrics::default());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(run(
        client,
        settings,
        Some(leader),
        metrics.clone(),
        Arc::new(AtomicBool::new(false)),
        async move {
            let _ = stopped.await;
        },
    ));
    Replica {
        metrics,
        stop,
        task,
    }
}

async fn wait_leads(replica: &Replica, what: &str) {
    wait_until(what, Duration::from_secs(30), || async {
        if replica.metrics.leading() {
            Check::Done(())
        } else {
            Check::Pending("standing by".into())
        }
    })
    .await
    .expect("a replica leads");
}

#[tokio::test]
async fn a_leader_that_cannot_renew_its_lease_stops_writing_before_it_expires() {
    let plane = Plane::start("lease-unreachable").await;
    let client = operator_account(&plane, "first").await;
    let first = replica(&plane, client, "first");
    wait_leads(&first, "the first replica to lead").await;
    let names = vec!["fenced".to_string()];
    plane.apply(&plane.fleet("fenced", 1, &[]).await).await;
    plane.wait_ready(&names, Duration::from_secs(90)).await;
    assert!(first.metrics.total_writes() > 0, "it wrote while it led");

    // It can no longer read or renew its Lease; wait until the Lease would have expired.
    plane
        .api::<RoleBinding>()
        .delete("first-lease", &DeleteParams::default())
        .await
        .expect("Lease permissions revoked");
    tokio::time::sleep(Duration::from_secs(LEASE_SECONDS + 1)).await;
    let writes = first.metrics.total_writes();
    assert!(
        first.metrics.leading(),
        "its Lease task cannot tell that it lost the Lease"
    );

    // A change it would apply, while nobody else leads yet.
    plane.apply(&plane.fleet("fenced", 2, &[]).await).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        first.metrics.total_writes(),
        writes,
        "it wrote without its Lease"
    );

    let second = replica(&plane, plane.admin.clone(), "second");
    wait_leads(&second, "the second replica to take over").await;
    plane
        .wait_statefulset(
            "fenced",
            "2 replicas from the new leader",
            APPLIED_WITHIN,
            |s| s.spec.as_ref().and_then(|s| s.replicas) == Some(2),
        )
        .await;
    plane.wait_ready(&names, Duration::from_secs(60)).await;
    assert!(second.metrics.total_writes() > 0);
    assert_eq!(
        first.metrics.total_writes(),
        writes,
        "it wrote after the takeover"
    );

    for replica in [first, second] {
        let _ = replica.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), replica.task).await;
    }
    plane.stop().await;
}
