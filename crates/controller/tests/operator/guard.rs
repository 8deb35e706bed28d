//! The operator's guard as the cluster-wide install ships it: the ServiceAccount
//! `celld-system/celld-operator`, holding the install's ClusterRole through a
//! ClusterRoleBinding (every namespace), is refused by the ValidatingAdmissionPolicy what its
//! RBAC allows but the operator never does: a Job in `kube-system` or its own namespace, a
//! change to an object it does not manage, a pod with a token, host access or privilege.

use crate::operator_rbac::{OPERATOR_SA, apply_guard};
use crate::support::*;
use celld_api::CelldFleet;
use celld_operator::guard::Subject;
use celld_testkit::{Check, TestEnv, client_as_service_account, wait_until};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::{Value, json};

const HOME: &str = "celld-system";
const TESTS: &str = "celld-operator-tests";

/// The installs' operator ServiceAccount with the cluster-wide install's ClusterRole, and a
/// client as it; the installs' guard applied.
async fn cluster_wide_operator(env: &TestEnv) -> Client {
    let admin = env.client();
    let pp = PatchParams::apply(TESTS).force();
    let home = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": HOME}});
    Api::<Namespace>::all(admin.clone())
        .patch(HOME, &pp, &Patch::Apply(&home))
        .await
        .expect("the operator's namespace");
    let sa =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": OPERATOR_SA}});
    Api::<ServiceAccount>::namespaced(admin.clone(), HOME)
        .patch(OPERATOR_SA, &pp, &Patch::Apply(&sa))
        .await
        .expect("the operator's ServiceAccount");
    let docs = yaml_docs("config/rbac/role.yaml");
    let role: ClusterRole = serde_json::from_value(docs[0].clone()).expect("ClusterRole first");
    Api::<ClusterRole>::all(admin.clone())
        .patch(&role.name_any(), &pp, &Patch::Apply(&role))
        .await
        .expect("ClusterRole applied");
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "celld-operator-guard-test"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role.name_any()},
        "subjects": [{"kind": "ServiceAccount", "name": OPERATOR_SA, "namespace": HOME}],
    }))
    .expect("ClusterRoleBinding");
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch(&binding.name_any(), &pp, &Patch::Apply(&binding))
        .await
        .expect("ClusterRoleBinding applied");
    apply_guard(
        &admin,
        &Subject::ServiceAccount {
            namespace: HOME.into(),
            name: OPERATOR_SA.into(),
        },
    )
    .await;
    client_as_service_account(&admin, HOME, OPERATOR_SA)
        .await
        .expect("a client as the operator")
}

/// A fleet object (no operator runs here): the owner the managed objects name.
async fn owner(env: &TestEnv) -> CelldFleet {
    let fleet = fleet(
        "web",
        json!({"objectStorage": {"bucket": "s3://bucket/web"}}),
    )
    .expect("a CelldFleet");
    env.api::<CelldFleet>()
        .create(&PostParams::default(), &fleet)
        .await
        .expect("the fleet created")
}

fn managed_metadata(name: &str, ns: &str, fleet: &CelldFleet) -> Value {
    json!({
        "name": name,
        "namespace": ns,
        "labels": {"app.kubernetes.io/managed-by": "celld-operator"},
        "ownerReferences": [fleet.controller_owner_ref(&()).expect("owner reference")],
    })
}

fn job(meta: Value, pod: Value) -> Job {
    let mut spec = json!({
        "restartPolicy": "Never",
        "automountServiceAccountToken": false,
        "containers": [{"name": "deploy", "image": "busybox"}],
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), pod.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
        "spec": {"template": {"spec": spec}},
    }))
    .expect("a Job")
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

/// The message of a refusal by the guard; panics on anything else.
fn refused<T: std::fmt::Debug>(what: &str, result: Result<T, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(status)) if status.code == 422 || status.code == 403 => {
            assert!(
                status.message.contains("celld-operator-guard"),
                "{what}: refused, but not by the guard: {}",
                status.message
            );
            status.message.clone()
        }
        other => panic!("{what}: the guard let it through: {other:?}"),
    }
}

#[tokio::test]
async fn the_operator_identity_touches_only_what_it_manages() {
    let env = env_with_crds("guard").await;
    let op = cluster_wide_operator(&env).await;
    let ns = env.namespace();
    let fleet = owner(&env).await;
    let jobs = |ns: &str| Api::<Job>::namespaced(op.clone(), ns);

    // A policy takes a moment to be loaded: the first refusal says it is.
    let system_job = job(managed_metadata("deploy", "kube-system", &fleet), json!({}));
    let message = wait_until("the guard loaded", TIMEOUT, || async {
        match jobs("kube-system").create(&dry_run(), &system_job).await {
            Err(kube::Error::Api(s)) if s.message.contains("celld-operator-guard") => {
                Check::Done(s.message)
            }
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("a Job in kube-system refused");
    assert!(message.contains("kube-system"), "{message}");
    let home_job = job(managed_metadata("deploy", HOME, &fleet), json!({}));
    refused(
        "a Job in the operator's namespace",
        jobs(HOME).create(&dry_run(), &home_job).await,
    );

    // In a tenant's namespace: a managed, safe Job passes; each unsafe pod is refused.
    let safe = job(managed_metadata("deploy", ns, &fleet), json!({}));
    jobs(ns)
        .create(&dry_run(), &safe)
        .await
        .expect("a managed Job with a safe pod is allowed");
    for (what, pod) in [
        (
            "a mounted token",
            json!({"automountServiceAccountToken": true}),
        ),
        (
            "a hostPath volume",
            json!({"volumes": [{"name": "h", "hostPath": {"path": "/"}}]}),
        ),
        ("the host network", json!({"hostNetwork": true})),
        (
            "a privileged container",
            json!({"containers": [{"name": "x", "image": "busybox", "securityContext": {"privileged": true}}]}),
        ),
    ] {
        let unsafe_job = job(managed_metadata("deploy", ns, &fleet), pod);
        refused(what, jobs(ns).create(&dry_run(), &unsafe_job).await);
    }
    let unowned = job(
        json!({"name": "deploy", "namespace": ns, "labels": {"app.kubernetes.io/managed-by": "celld-operator"}}),
        json!({}),
    );
    let message = refused(
        "a Job without a fleet owner",
        jobs(ns).create(&dry_run(), &unowned).await,
    );
    assert!(
        message.contains("creates only objects it manages"),
        "{message}"
    );

    // Someone else's NetworkPolicy: not changed, not deleted; a managed one is.
    let policy = |meta: Value| -> NetworkPolicy {
        serde_json::from_value(json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta,
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
        }))
        .expect("a NetworkPolicy")
    };
    env.api::<NetworkPolicy>()
        .create(&PostParams::default(), &policy(json!({"name": "theirs"})))
        .await
        .expect("the tenant's NetworkPolicy");
    let op_policies = Api::<NetworkPolicy>::namespaced(op.clone(), ns);
    let takeover = policy(managed_metadata("theirs", ns, &fleet));
    let message = refused(
        "a patch of an unlabelled NetworkPolicy",
        op_policies
            .patch(
                "theirs",
                &PatchParams::apply("celld-operator").force(),
                &Patch::Apply(&takeover),
            )
            .await,
    );
    assert!(
        message.contains("changes or deletes only objects it manages"),
        "{message}"
    );
    refused(
        "a delete of an unlabelled NetworkPolicy",
        op_policies.delete("theirs", &DeleteParams::default()).await,
    );
    op_policies
        .create(
            &PostParams::default(),
            &policy(managed_metadata("mine", ns, &fleet)),
        )
        .await
        .expect("a managed NetworkPolicy is created");
    op_policies
        .delete("mine", &DeleteParams::default())
        .await
        .expect("and deleted");

    // A fleet is the operator's only when a preview owns it.
    let tenant_fleet = fleet_with_meta(json!({"name": "other", "namespace": ns}));
    refused(
        "a fleet no preview owns",
        Api::<CelldFleet>::namespaced(op.clone(), ns)
            .create(&dry_run(), &tenant_fleet)
            .await,
    );
}

fn fleet_with_meta(meta: Value) -> CelldFleet {
    serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet", "metadata": meta,
        "spec": {"objectStorage": {"bucket": "s3://bucket/other"}},
    }))
    .expect("a CelldFleet")
}
