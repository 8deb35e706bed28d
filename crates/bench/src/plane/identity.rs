//! The operator's own identity on the bench's control plane, as `config/` installs it: the
//! ServiceAccount `celld-system/celld-operator` bound to the generated ClusterRole, and a
//! kubeconfig with a token of it. The audit log tells the operator's requests apart by it.

use crate::error::{Error, Result};
use crate::settings::{OPERATOR_ACCOUNT, OPERATOR_NAMESPACE};
use celld_testkit::paths::workspace_root;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Patch, PatchParams, PostParams};
use kube::config::Kubeconfig;
use kube::{Api, Client};
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Lifetime of the operator's token: longer than any run.
const TOKEN_SECONDS: i64 = 4 * 3600;

/// Field manager of what the bench applies.
pub const FIELD_MANAGER: &str = "celld-bench";

/// Creates the operator's namespace, ServiceAccount, ClusterRole and binding, and writes a
/// kubeconfig that authenticates as it to `dir/operator.kubeconfig`. `admin_kubeconfig`
/// gives the API server's address and `dir/pki/ca.crt` its CA.
pub async fn operator_kubeconfig(
    client: &Client,
    admin_kubeconfig: &Path,
    dir: &Path,
) -> Result<PathBuf> {
    let apply = PatchParams::apply(FIELD_MANAGER).force();
    let namespace: Namespace = object(
        json!({"metadata": {"name": OPERATOR_NAMESPACE}}),
        "the operator's Namespace",
    )?;
    Api::<Namespace>::all(client.clone())
        .patch(OPERATOR_NAMESPACE, &apply, &Patch::Apply(&namespace))
        .await
        .map_err(Error::kube("creating the operator's namespace"))?;
    let account: ServiceAccount = object(
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": OPERATOR_ACCOUNT}}),
        "the operator's ServiceAccount",
    )?;
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), OPERATOR_NAMESPACE);
    accounts
        .patch(OPERATOR_ACCOUNT, &apply, &Patch::Apply(&account))
        .await
        .map_err(Error::kube("creating the operator's ServiceAccount"))?;

    let role: ClusterRole = rbac_document(
        &workspace_root().join("config/rbac/role.yaml"),
        "ClusterRole",
    )?;
    let role_name = role.metadata.name.clone().unwrap_or_default();
    Api::<ClusterRole>::all(client.clone())
        .patch(&role_name, &apply, &Patch::Apply(&role))
        .await
        .map_err(Error::kube(
            "applying the operator's ClusterRole (config/rbac/role.yaml)",
        ))?;
    let binding: ClusterRoleBinding = rbac_document(
        &workspace_root().join("config/rbac/role_binding.yaml"),
        "ClusterRoleBinding",
    )?;
    let binding_name = binding.metadata.name.clone().unwrap_or_default();
    Api::<ClusterRoleBinding>::all(client.clone())
        .patch(&binding_name, &apply, &Patch::Apply(&binding))
        .await
        .map_err(Error::kube(
            "applying the operator's ClusterRoleBinding (config/rbac/role_binding.yaml)",
        ))?;

    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(TOKEN_SECONDS),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let token = accounts
        .create_token_request(OPERATOR_ACCOUNT, &PostParams::default(), &request)
        .await
        .map_err(Error::kube(
            "requesting a token of the operator's ServiceAccount",
        ))?
        .status
        .map(|s| s.token)
        .ok_or_else(|| Error::Manifest {
            what: "the TokenRequest's answer".into(),
            detail: "it has no status.token".into(),
        })?;

    let admin = Kubeconfig::read_from(admin_kubeconfig).map_err(|e| Error::Manifest {
        what: admin_kubeconfig.display().to_string(),
        detail: e.to_string(),
    })?;
    let server = admin
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref())
        .and_then(|c| c.server.clone())
        .ok_or_else(|| Error::Manifest {
            what: admin_kubeconfig.display().to_string(),
            detail: "it names no server".into(),
        })?;
    let path = dir.join("operator.kubeconfig");
    std::fs::write(
        &path,
        kubeconfig_text(&server, &dir.join("pki/ca.crt"), &token),
    )
    .map_err(Error::io("writing the operator's kubeconfig", &path))?;
    Ok(path)
}

fn object<T: serde::de::DeserializeOwned>(value: serde_json::Value, what: &str) -> Result<T> {
    serde_json::from_value(value).map_err(|e| Error::Manifest {
        what: what.into(),
        detail: e.to_string(),
    })
}

/// The first document of kind `kind` in a multi-document YAML file.
fn rbac_document<T: serde::de::DeserializeOwned>(path: &Path, kind: &str) -> Result<T> {
    let text =
        std::fs::read_to_string(path).map_err(Error::io("reading an RBAC manifest", path))?;
    first_of_kind(&text, kind).map_err(|detail| Error::Manifest {
        what: path.display().to_string(),
        detail,
    })
}

fn first_of_kind<T: serde::de::DeserializeOwned>(text: &str, kind: &str) -> Result<T, String> {
    for document in serde_yaml::Deserializer::from_str(text) {
        let value = serde_yaml::Value::deserialize(document).map_err(|e| e.to_string())?;
        if value.get("kind").and_then(|k| k.as_str()) == Some(kind) {
            return serde_yaml::from_value(value).map_err(|e| e.to_string());
        }
    }
    Err(format!("it holds no {kind}"))
}

/// A kubeconfig that authenticates with a bearer token.
fn kubeconfig_text(server: &str, ca: &Path, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\nusers:\n- name: {OPERATOR_ACCOUNT}\n  user:\n    token: {token}\ncontexts:\n- name: bench\n  context: {{cluster: bench, user: {OPERATOR_ACCOUNT}}}\ncurrent-context: bench\n",
        ca = ca.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_role_is_found_among_other_documents() {
        let text = "kind: Role\nmetadata: {name: a}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: b}\nrules: []\n";
        let role: ClusterRole = first_of_kind(text, "ClusterRole").unwrap();
        assert_eq!(role.metadata.name.as_deref(), Some("b"));
        assert!(first_of_kind::<ClusterRole>("kind: Role\n", "ClusterRole").is_err());
    }

    #[test]
    fn the_generated_role_grants_the_operator_its_kinds() {
        let path = workspace_root().join("config/rbac/role.yaml");
        let role: ClusterRole = rbac_document(&path, "ClusterRole").unwrap();
        let resources: Vec<String> = role
            .rules
            .unwrap_or_default()
            .into_iter()
            .flat_map(|r| r.resources.unwrap_or_default())
            .collect();
        assert!(
            resources.iter().any(|r| r == "statefulsets"),
            "{resources:?}"
        );
    }

    #[test]
    fn the_kubeconfig_authenticates_with_the_token() {
        let text = kubeconfig_text("https://127.0.0.1:6443", Path::new("/ca.crt"), "tok");
        let parsed: Kubeconfig = serde_yaml::from_str(&text).unwrap();
        assert_eq!(parsed.current_context.as_deref(), Some("bench"));
        let user = parsed.auth_infos[0].auth_info.as_ref().unwrap();
        assert!(user.token.is_some());
        let cluster = parsed.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://127.0.0.1:6443"));
    }
}
