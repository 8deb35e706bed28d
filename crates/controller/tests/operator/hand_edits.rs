//! Children edited by someone else: hand-edited Service ports come back (with the other children
//! edited in the same pass), and ports other controllers add stay without a write per resync.
//! Every child kind edited and deleted, with the operator as a process: resilience/hand_edits.rs.

use crate::support::*;
use celld_api::reasons::Reason;
use celld_testkit::{Check, TestEnv, wait_until};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::ResourceExt;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

/// How long a repair may take: the edit triggers a reconcile through the watch on Services.
const REPAIR: Duration = Duration::from_secs(20);

/// (name, port, protocol, targetPort) of every port of the Service `name`.
async fn ports(env: &TestEnv, name: &str) -> Vec<(String, i32, String, String)> {
    let svc = env.api::<Service>().get(name).await.expect("Service read");
    svc.spec
        .and_then(|s| s.ports)
        .unwrap_or_default()
        .into_iter()
        .map(|p| {
            let target = match p.target_port {
                Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n)) => {
                    n.to_string()
                }
                Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s)) => s,
                None => String::new(),
            };
            (
                p.name.unwrap_or_default(),
                p.port,
                p.protocol.unwrap_or_default(),
                target,
            )
        })
        .collect()
}

fn port(name: &str, port: i32, target: i32) -> (String, i32, String, String) {
    (name.into(), port, "TCP".into(), target.to_string())
}

/// Replaces the port of the Service's first entry, as `kubectl patch --type=json` does.
async fn hand_edit_port(env: &TestEnv, service: &str, value: i32) {
    let patch = serde_json::from_value(json!([
        {"op": "replace", "path": "/spec/ports/0/port", "value": value},
    ]))
    .expect("a JSON patch");
    let params = PatchParams {
        field_manager: Some("kubectl-patch".into()),
        ..PatchParams::default()
    };
    env.api::<Service>()
        .patch(service, &params, &Patch::<()>::Json(patch))
        .await
        .expect("Service port edited by hand");
}

/// A fleet with an Ingress and two nodes (so a PodDisruptionBudget), Ready.
async fn ready_fleet(env: &TestEnv, test: &str, name: &str) {
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, test);
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000a7").await;
    let fleet = inline_fleet(
        name,
        &s3,
        &prefix,
        json!({"ingress": {"hostname": format!("{name}.example.com"), "ingressClass": "nginx"}}),
    )
    .expect("a valid CelldFleet");
    apply_fleet(env, &fleet).await;
    wait_condition(env, name, "Ready", "True", None).await;
}

#[tokio::test]
async fn hand_edited_service_ports_are_restored() {
    let (env, op) = env_with_operator("drift-ports").await;
    ready_fleet(&env, "drift-ports", "edited").await;

    hand_edit_port(&env, "edited", 81).await;
    hand_edit_port(&env, "edited-peer", 8082).await;
    // Drift on the children applied after the Services must be repaired in the same pass.
    env.api::<NetworkPolicy>()
        .delete("edited", &DeleteParams::default())
        .await
        .expect("NetworkPolicy deleted by hand");
    env.api::<PodDisruptionBudget>()
        .delete("edited", &DeleteParams::default())
        .await
        .expect("PodDisruptionBudget deleted by hand");
    env.api::<Ingress>()
        .patch(
            "edited",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"rules": [{"host": "elsewhere.example.com"}]}})),
        )
        .await
        .expect("Ingress host edited by hand");

    wait_until("the Services' ports restored", REPAIR, || async {
        let (public, peer) = (
            ports(&env, "edited").await,
            ports(&env, "edited-peer").await,
        );
        if public == vec![port("http", 80, 8080)] && peer == vec![port("internal", 8081, 8081)] {
            Check::Done(())
        } else {
            Check::Pending(format!("public {public:?}, peer {peer:?}"))
        }
    })
    .await
    .expect("hand-edited ports repaired");
    wait_until(
        "the NetworkPolicy, PDB and Ingress restored",
        REPAIR,
        || async {
            let np = env.api::<NetworkPolicy>().get_opt("edited").await;
            let pdb = env.api::<PodDisruptionBudget>().get_opt("edited").await;
            let host = env
                .api::<Ingress>()
                .get("edited")
                .await
                .ok()
                .and_then(|i| i.spec?.rules?.first()?.host.clone());
            match (&np, &pdb, host.as_deref()) {
                (Ok(Some(_)), Ok(Some(_)), Some("edited.example.com")) => Check::Done(()),
                _ => Check::Pending(format!(
                    "NetworkPolicy {:?}, PDB {:?}, host {host:?}",
                    np.map(|o| o.is_some()),
                    pdb.map(|o| o.is_some())
                )),
            }
        },
    )
    .await
    .expect("the other children repaired too");
    let degraded = condition(&env, "edited", "Degraded").await;
    assert_eq!(degraded.status, "False", "{degraded:?}");
    assert_eq!(op.metrics.failures(Reason::ChildRejected), 0);
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn a_port_another_controller_adds_stays_and_costs_no_writes() {
    let (env, op) = env_with_operator("foreign-port").await;
    ready_fleet(&env, "foreign-port", "shared").await;
    // Let the last status and events settle.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let writes_before = op.metrics.total_writes();

    let foreign = json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "shared"},
        "spec": {"ports": [{"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"}]},
    });
    let added = env
        .api::<Service>()
        .patch(
            "shared",
            &PatchParams::apply("mesh-injector"),
            &Patch::Apply(&foreign),
        )
        .await
        .expect("a port added by another field manager");
    let version = added.resource_version();
    let reconciles_before = op.metrics.ok_reconciles();
    wait_until("at least 3 more reconciles", TIMEOUT, || async {
        let n = op.metrics.ok_reconciles();
        if n >= reconciles_before + 3 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n} reconciles"))
        }
    })
    .await
    .expect("periodic reconciles happen");

    assert_eq!(
        ports(&env, "shared").await,
        vec![port("http", 80, 8080), port("metrics", 9090, 9090)],
        "the operator's port and the foreign one"
    );
    let svc = env.api::<Service>().get("shared").await.expect("Service");
    assert_eq!(
        svc.resource_version(),
        version,
        "the Service was not written"
    );
    assert_eq!(
        op.metrics.total_writes(),
        writes_before,
        "no write was sent:\n{}",
        op.metrics.encode()
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
