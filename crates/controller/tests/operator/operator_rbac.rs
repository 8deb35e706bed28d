//! The test operators' identity: the ServiceAccount `celld-operator` of the test namespace,
//! holding what the namespace-scoped install grants in each watched namespace (the Role of
//! install-watched-namespace.yaml, the Gateway reader, and the leader-election Role), and judged
//! by the operator's guard (a copy of the installs' ValidatingAdmissionPolicy for every
//! ServiceAccount of that name, so every operator test runs under it).

use crate::support::yaml_docs;
use celld_operator::guard::{self, Subject};
use celld_testkit::{TestEnv, client_as_service_account};
use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::sync::OnceCell;

const TESTS: &str = "celld-operator-tests";

/// The ServiceAccount every test operator runs as.
pub const OPERATOR_SA: &str = "celld-operator";

/// Which of the install's rules the test's operator holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Grants {
    /// The watched namespace's Role, the Gateway reader and the leader-election Role.
    All,
    /// Only the leader-election Role: it can lead, and every list of its watches is refused.
    LeaderElectionOnly,
}

/// The guard judging every test operator, the test namespaces' ServiceAccounts called
/// [`OPERATOR_SA`]: the installs' checks, `celld-system` refused as their own namespace.
pub fn test_guard() -> Subject {
    Subject::AnyServiceAccountNamed {
        name: OPERATOR_SA.into(),
        home: "celld-system".into(),
    }
}

/// Applies the guard for `subject` (once per process for the test guard).
pub async fn apply_guard(admin: &Client, subject: &Subject) {
    let pp = PatchParams::apply(TESTS).force();
    let policy = guard::policy(subject);
    Api::<ValidatingAdmissionPolicy>::all(admin.clone())
        .patch(&policy.name_any(), &pp, &Patch::Apply(&policy))
        .await
        .expect("the operator's guard applied");
    let binding = guard::binding(subject);
    Api::<ValidatingAdmissionPolicyBinding>::all(admin.clone())
        .patch(&binding.name_any(), &pp, &Patch::Apply(&binding))
        .await
        .expect("the operator's guard binding applied");
}

/// Installs [`test_guard`] once per test process.
pub async fn install_guard(admin: &Client) {
    static ONCE: OnceCell<()> = OnceCell::const_new();
    ONCE.get_or_init(|| async {
        apply_guard(admin, &test_guard()).await;
    })
    .await;
}

/// The Role of install-watched-namespace.yaml.
fn watched_namespace_role() -> Role {
    let docs = yaml_docs("install-watched-namespace.yaml");
    serde_json::from_value(docs[0].clone()).expect("the watched namespace's Role first")
}

/// The leader-election Role of config/rbac/role.yaml.
fn leader_election_role() -> Role {
    let docs = yaml_docs("config/rbac/role.yaml");
    serde_json::from_value(docs[1].clone()).expect("the leader-election Role second")
}

/// Applies `binding` of `role_kind`/`role` to the ServiceAccount `sa_ns`/[`OPERATOR_SA`] in
/// `ns`.
async fn bind(admin: &Client, ns: &str, name: &str, role_kind: &str, role: &str, sa_ns: &str) {
    let binding: RoleBinding = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": OPERATOR_SA, "namespace": sa_ns}],
    }))
    .expect("RoleBinding");
    Api::<RoleBinding>::namespaced(admin.clone(), ns)
        .patch(
            name,
            &PatchParams::apply(TESTS).force(),
            &Patch::Apply(&binding),
        )
        .await
        .expect("RoleBinding applied");
}

/// Grants the operator ServiceAccount of `sa_ns` what the namespace-scoped install grants in a
/// watched namespace `ns`: the Role of install-watched-namespace.yaml, and the Gateway
/// reader's rule bound there.
pub async fn grant_watched_namespace(admin: &Client, ns: &str, sa_ns: &str) {
    let pp = PatchParams::apply(TESTS).force();
    let mut role = watched_namespace_role();
    role.metadata.namespace = Some(ns.to_string());
    Api::<Role>::namespaced(admin.clone(), ns)
        .patch(&role.name_any(), &pp, &Patch::Apply(&role))
        .await
        .expect("the watched namespace's Role applied");
    bind(admin, ns, "celld-operator", "Role", &role.name_any(), sa_ns).await;
    let mut gateways = Role {
        rules: Some(vec![celld_operator::rbac::gateway_rule()]),
        ..Role::default()
    };
    gateways.metadata.name = Some("celld-operator-gateways".into());
    gateways.metadata.namespace = Some(ns.to_string());
    Api::<Role>::namespaced(admin.clone(), ns)
        .patch("celld-operator-gateways", &pp, &Patch::Apply(&gateways))
        .await
        .expect("the Gateway reader applied");
    bind(
        admin,
        ns,
        "celld-operator-gateways",
        "Role",
        "celld-operator-gateways",
        sa_ns,
    )
    .await;
}

/// Grants the ServiceAccount `celld-operator` in the test namespace the install's rules for a
/// watched namespace (the test namespace) and returns a client that authenticates as it.
pub async fn operator_client(env: &TestEnv) -> Client {
    operator_client_with(env, Grants::All).await
}

/// [`operator_client`] with only the rules `grants` names.
pub async fn operator_client_with(env: &TestEnv, grants: Grants) -> Client {
    let admin = env.client();
    let ns = env.namespace();
    let pp = PatchParams::apply(TESTS).force();
    let mut role = leader_election_role();
    role.metadata.namespace = Some(ns.to_string());
    env.api::<Role>()
        .patch(&role.name_any(), &pp, &Patch::Apply(&role))
        .await
        .expect("Role applied");
    let sa = ServiceAccount {
        metadata: kube::api::ObjectMeta {
            name: Some(OPERATOR_SA.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    env.api::<ServiceAccount>()
        .patch(OPERATOR_SA, &pp, &Patch::Apply(&sa))
        .await
        .expect("ServiceAccount");
    bind(
        &admin,
        ns,
        "celld-operator-leader-election",
        "Role",
        &role.name_any(),
        ns,
    )
    .await;
    if grants == Grants::All {
        grant_watched_namespace(&admin, ns, ns).await;
    }
    client_as_service_account(&admin, ns, OPERATOR_SA)
        .await
        .expect("service account client")
}

/// The test namespace and a second one, `other`, both watched by one operator (`--namespaces`)
/// holding a watched namespace's Role in each and its Lease in the test namespace.
pub async fn operator_watching_two(env: &TestEnv, other: &str) -> crate::support::Operator {
    let admin = env.client();
    let ns = env.namespace();
    let client = operator_client(env).await;
    grant_watched_namespace(&admin, other, ns).await;
    let mut settings = crate::support::settings(env, "op-1");
    settings.namespaces = celld_operator::cache::watch_scope::WatchScope::Only(
        [ns.to_string(), other.to_string()].into(),
    );
    crate::support::start_leading_in(client, settings, ns)
}
