//! The one lookup every fleet command starts from: connect, read the CelldFleet, resolve its
//! storage exactly as the operator does, check its credentials Secret exists, and list its node
//! pods. `deploy`, `history` and `rollback` need all of it and fail at the first problem
//! ([`FleetContext::load`]). `status` and `logs` run the same steps one by one ([`find`],
//! [`resolve_storage`], [`secret_exists`], [`node_pods`]) because they report on a fleet whose
//! storage is broken too: `status` turns a failed step into a line of its report, `logs` needs
//! only the fleet and its pods.

use crate::cluster::fleets;
use crate::cluster::kubeconfig::{self, ConnectArgs, Target};
use crate::error::{Error, Result, status_code};
use celld_api::{CelldFleet, ResolveError, ResolvedStorage, labels};
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::ListParams;
use kube::{Api, Client};

/// A fleet, where it stores its Workers, and how to reach its namespace.
#[derive(Clone)]
pub struct FleetContext {
    /// The client and the fleet's namespace.
    pub target: Target,
    /// The CelldFleet as read now.
    pub fleet: CelldFleet,
    /// Its bucket, endpoint, region and credentials Secret's name.
    pub storage: ResolvedStorage,
}

impl FleetContext {
    /// Connects with `cluster` and loads fleet `name`: a fleet that does not exist, storage
    /// that does not resolve, or a credentials Secret that is missing is an error naming the fix.
    /// Every store works (s3://, gs://, az://), with a credentials Secret or, without one, the
    /// workload identity of the fleet's ServiceAccount.
    pub async fn load(cluster: &ConnectArgs, name: &str) -> Result<Self> {
        let target = kubeconfig::connect(cluster).await?;
        Self::load_in(target, name).await
    }

    /// [`FleetContext::load`] with a client already built.
    pub async fn load_in(target: Target, name: &str) -> Result<Self> {
        let fleet = find(&target, name).await?;
        let storage = resolve_storage(&target, &fleet)
            .await
            .map_err(|source| Error::Storage {
                fleet: name.to_string(),
                source: Box::new(source),
            })?;
        if let Some(secret) = &storage.credentials_secret
            && secret_exists(&target, secret).await? == Some(false)
        {
            return Err(Error::Storage {
                fleet: name.to_string(),
                source: Box::new(ResolveError::SecretNotFound {
                    name: secret.clone(),
                    namespace: target.namespace.clone(),
                    needs: celld_api::resolve::needed_keys(&[storage.bucket.scheme]),
                }),
            });
        }
        Ok(FleetContext {
            target,
            fleet,
            storage,
        })
    }

    /// The fleet's name.
    pub fn name(&self) -> &str {
        self.fleet.metadata.name.as_deref().unwrap_or_default()
    }

    /// The fleet's namespace.
    pub fn namespace(&self) -> &str {
        &self.target.namespace
    }

    /// The pods API of the fleet's namespace.
    pub fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.target.client.clone(), self.namespace())
    }

    /// The fleet's node pods as reload targets, in ordinal order.
    pub async fn nodes(&self) -> Result<Vec<Node>> {
        let pods = node_pods(
            &self.target.client,
            Some(self.namespace()),
            &node_selector(self.name()),
        )
        .await?;
        Ok(pods.iter().map(node).collect())
    }
}

/// A node of the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Pod name.
    pub name: String,
    /// Pod IP, when it has one.
    pub ip: Option<String>,
    /// Whether the pod is Ready (and not terminating).
    pub ready: bool,
}

/// A pod as a node.
pub fn node(pod: &Pod) -> Node {
    let status = pod.status.as_ref();
    let ready = pod.metadata.deletion_timestamp.is_none()
        && status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    Node {
        name: pod.metadata.name.clone().unwrap_or_default(),
        ip: status
            .and_then(|s| s.pod_ip.clone())
            .filter(|ip| !ip.is_empty()),
        ready,
    }
}

/// Step 1: fleet `name` in the target namespace, or an error naming similar fleets, other
/// namespaces holding one of that name, or missing CRDs.
pub async fn find(target: &Target, name: &str) -> Result<CelldFleet> {
    fleets::get(target, name).await
}

/// Step 2: the fleet's storage, resolved exactly as the operator does (inline, or through its
/// CelldObjectStore); the error says what to fix.
pub async fn resolve_storage(
    target: &Target,
    fleet: &CelldFleet,
) -> std::result::Result<ResolvedStorage, ResolveError> {
    celld_api::resolve::fetch(&target.client, &target.namespace, &fleet.spec).await
}

/// Step 3: whether the credentials Secret `name` exists in the target namespace, from its
/// metadata only (its values are never read); None when RBAC does not allow reading it.
pub async fn secret_exists(target: &Target, name: &str) -> Result<Option<bool>> {
    let ns = target.namespace.as_str();
    let secrets: Api<Secret> = Api::namespaced(target.client.clone(), ns);
    match secrets.get_metadata_opt(name).await {
        Ok(found) => Ok(Some(found.is_some())),
        Err(e) if status_code(&e) == Some(403) => Ok(None),
        Err(e) => Err(Error::api("get", "secrets", Some(ns), e)),
    }
}

/// The label selector of fleet `fleet`'s node pods.
pub fn node_selector(fleet: &str) -> String {
    format!(
        "{}={fleet},{}={}",
        labels::FLEET,
        labels::ROLE,
        labels::ROLE_NODE
    )
}

/// Step 4: the pods that match `selector` (a node selector) in `namespace`, or in every
/// namespace when None; ordered by namespace, then ordinal (`web-2` before `web-10`).
pub async fn node_pods(
    client: &Client,
    namespace: Option<&str>,
    selector: &str,
) -> Result<Vec<Pod>> {
    let api: Api<Pod> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let mut pods = api
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(|e| Error::api("list", "pods", namespace, e))?
        .items;
    pods.sort_by_key(|p| {
        (
            p.metadata.namespace.clone().unwrap_or_default(),
            ordinal_order(p.metadata.name.as_deref().unwrap_or_default()),
        )
    });
    Ok(pods)
}

/// Sort key that puts `web-2` before `web-10`.
pub fn ordinal_order(name: &str) -> (String, u64, String) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, num) = name.split_at(name.len() - digits);
    (stem.to_string(), num.parse().unwrap_or(0), name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinal_order_puts_web_2_before_web_10() {
        let mut names = vec!["web-10", "web-2", "api-1", "web-1"];
        names.sort_by_key(|n| ordinal_order(n));
        assert_eq!(names, vec!["api-1", "web-1", "web-2", "web-10"]);
    }

    #[test]
    fn node_selector_names_the_fleet_and_the_node_role() {
        assert_eq!(
            node_selector("web"),
            "platform.celld.dev/fleet=web,platform.celld.dev/role=node"
        );
    }
}
