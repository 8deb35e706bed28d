//! The namespace-scoped install: `install-operator-namespaced.yaml` (the operator watching the
//! namespaces listed in the ConfigMap `celld-operator-namespaces`, with no cluster-wide rights
//! on Secrets, Jobs, pods or any child kind) and `install-watched-namespace.yaml` (the Role and
//! RoleBinding that let it work in one namespace, applied into each listed one with `-n`).

use crate::error::Error;
use crate::install::{self, Generated};
use crate::operator::{NAMESPACE, OPERATOR, labels};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The ConfigMap in the operator's namespace listing the watched namespaces.
pub const NAMESPACES_CONFIGMAP: &str = "celld-operator-namespaces";
/// Its key: namespaces separated by commas.
pub const NAMESPACES_KEY: &str = "namespaces";
/// The ClusterRole that reads Gateways in any namespace.
pub const GATEWAY_READER: &str = "celld-operator-gateways";
/// The ClusterRole that checks the tokens of `/metrics` requests.
pub const METRICS_AUTH: &str = "celld-operator-metrics-auth";

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(labels()),
        ..ObjectMeta::default()
    }
}

fn operator_subject() -> Vec<Subject> {
    vec![Subject {
        kind: "ServiceAccount".into(),
        name: OPERATOR.into(),
        namespace: Some(NAMESPACE.into()),
        ..Subject::default()
    }]
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: "rbac.authorization.k8s.io".into(),
        kind: kind.into(),
        name: name.into(),
    }
}

/// The Role and RoleBinding of one watched namespace, without a namespace of their own: `kubectl
/// apply -n NAMESPACE` puts them there.
pub fn watched_namespace() -> (Role, RoleBinding) {
    let role = Role {
        metadata: meta(OPERATOR, None),
        rules: Some(celld_operator::rbac::watched_namespace_rules()),
    };
    let binding = RoleBinding {
        metadata: meta(OPERATOR, None),
        role_ref: role_ref("Role", OPERATOR),
        subjects: Some(operator_subject()),
    };
    (role, binding)
}

/// The one cluster-wide grant of the namespace-scoped install: `get` of Gateways, which a
/// fleet's HTTPRoute may attach to in any namespace (see
/// [`celld_operator::rbac::gateway_rule`]). Without it, such a fleet's `status.url` says http.
pub fn gateway_reader() -> (ClusterRole, ClusterRoleBinding) {
    let role = ClusterRole {
        metadata: meta(GATEWAY_READER, None),
        rules: Some(vec![celld_operator::rbac::gateway_rule()]),
        ..ClusterRole::default()
    };
    let binding = ClusterRoleBinding {
        metadata: meta(GATEWAY_READER, None),
        role_ref: role_ref("ClusterRole", GATEWAY_READER),
        subjects: Some(operator_subject()),
    };
    (role, binding)
}

/// The second cluster-wide grant of the namespace-scoped install: `create` of TokenReviews
/// and SubjectAccessReviews, with which the operator checks who may read its `/metrics` (see
/// [`celld_operator::rbac::metrics_auth_rules`]). Without it, every scrape is answered 503.
pub fn metrics_auth() -> (ClusterRole, ClusterRoleBinding) {
    let role = ClusterRole {
        metadata: meta(METRICS_AUTH, None),
        rules: Some(celld_operator::rbac::metrics_auth_rules()),
        ..ClusterRole::default()
    };
    let binding = ClusterRoleBinding {
        metadata: meta(METRICS_AUTH, None),
        role_ref: role_ref("ClusterRole", METRICS_AUTH),
        subjects: Some(operator_subject()),
    };
    (role, binding)
}

/// The manager Deployment pinned to `image`, with `WATCH_NAMESPACES` from the ConfigMap
/// [`NAMESPACES_CONFIGMAP`]: the pods wait (CreateContainerConfigError) until it exists.
pub fn namespaced_manager(image: &str) -> Result<String, Error> {
    let pinned = install::pinned_manager(image)?;
    let mut lines: Vec<String> = Vec::new();
    let mut added = 0;
    for line in pinned.lines() {
        lines.push(line.to_string());
        if line.trim_end() == "          env:" {
            added += 1;
            for extra in [
                "            - name: WATCH_NAMESPACES".to_string(),
                "              valueFrom:".to_string(),
                "                configMapKeyRef:".to_string(),
                format!("                  name: {NAMESPACES_CONFIGMAP}"),
                format!("                  key: {NAMESPACES_KEY}"),
            ] {
                lines.push(extra);
            }
        }
    }
    if added != 1 {
        return Err(Error::Manager(format!(
            "expected one container `env:` line to add WATCH_NAMESPACES under, found {added}"
        )));
    }
    Ok(lines.join("\n") + "\n")
}

/// The whole namespace-scoped install manifest, in apply order.
pub fn install_manifest(parts: &Generated) -> Result<String, Error> {
    let image = install::image()?;
    let header = format!(
        "# celld-operator v{version}, namespace-scoped: namespace celld-system, the CRDs, the\n\
         # previews' admission policy, the operator's guard, the leader-election Role, a\n\
         # ClusterRole reading Gateways (for https in status.url), one creating the token and\n\
         # access reviews that guard /metrics, the users' aggregated roles, the metrics reader\n\
         # role, the operator's NetworkPolicy and Deployment ({image}), watching the namespaces\n\
         # the ConfigMap {NAMESPACES_CONFIGMAP} lists. Each watched namespace needs the\n\
         # Role of install-watched-namespace.yaml:\n\
         #   kubectl apply --server-side -f install-operator-namespaced.yaml\n\
         #   kubectl -n celld-system create configmap {NAMESPACES_CONFIGMAP} --from-literal={NAMESPACES_KEY}=team-a,team-b\n\
         #   kubectl apply --server-side -n team-a -f install-watched-namespace.yaml\n\
         # Generated by `make manifests` from config/ and the Rust code; do not edit.\n",
        version = install::version()?
    );
    Ok(header
        + &install::joined(
            parts,
            &[install::leader_election_binding()],
            &namespaced_manager(&image)?,
        ))
}
