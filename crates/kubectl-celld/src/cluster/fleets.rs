//! Reading CelldFleets with errors that help: missing CRDs, near names, other namespaces.

use crate::cluster::kubeconfig::Target;
use crate::error::{Error, Result, is_unknown_resource, status_code};
use celld_api::CelldFleet;
use kube::api::ListParams;
use kube::{Api, Client};

/// RBAC name of the fleet resource.
pub const RESOURCE: &str = "celldfleets.platform.celld.dev";

/// The field manager of the plugin's writes to fleets (`init --apply`, the source-suspended
/// annotation).
pub const FIELD_MANAGER: &str = "kubectl-celld";

/// Maps an error of a fleet request: an unknown resource type means the CRDs are missing, or
/// that the server is not a Kubernetes API server at all.
pub async fn fleet_error(
    client: &Client,
    verb: &'static str,
    namespace: Option<&str>,
    err: kube::Error,
) -> Error {
    if is_unknown_resource(&err) {
        unknown_resource(client, "celldfleets").await
    } else {
        Error::api(verb, RESOURCE, namespace, err)
    }
}

/// The error for a 404 on a whole celld resource type: a Kubernetes API server answers
/// `/version`, so the CRDs are missing; anything else is not a Kubernetes API server.
pub async fn unknown_resource(client: &Client, resource: &'static str) -> Error {
    match client.apiserver_version().await {
        Err(e) if status_code(&e) == Some(404) || matches!(e, kube::Error::SerdeError(_)) => {
            Error::NotKubernetes {
                server: None,
                resource,
            }
        }
        _ => Error::CrdsMissing { resource },
    }
}

/// Lists the fleets of one namespace, or of all namespaces when `namespace` is None.
pub async fn list(target: &Target, namespace: Option<&str>) -> Result<Vec<CelldFleet>> {
    list_selected(target, namespace, None).await
}

/// Lists the fleets whose labels match `selector` (kubectl's label selector syntax).
pub async fn list_selected(
    target: &Target,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> Result<Vec<CelldFleet>> {
    let api: Api<CelldFleet> = match namespace {
        Some(ns) => Api::namespaced(target.client.clone(), ns),
        None => Api::all(target.client.clone()),
    };
    let mut params = ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    let mut fleets = match api.list(&params).await {
        Ok(list) => list.items,
        Err(e) => return Err(fleet_error(&target.client, "list", namespace, e).await),
    };
    fleets.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    Ok(fleets)
}

/// Reads fleet `name` in the target namespace. When it does not exist, the error names fleets
/// with similar names in the namespace and namespaces that hold a fleet of exactly that name.
pub async fn get(target: &Target, name: &str) -> Result<CelldFleet> {
    let ns = target.namespace.as_str();
    let api: Api<CelldFleet> = Api::namespaced(target.client.clone(), ns);
    match api.get(name).await {
        Ok(fleet) => Ok(fleet),
        Err(e) if status_code(&e) == Some(404) && !is_unknown_resource(&e) => {
            Err(not_found(target, name).await)
        }
        Err(e) => Err(fleet_error(&target.client, "get", Some(ns), e).await),
    }
}

async fn not_found(target: &Target, name: &str) -> Error {
    let ns = target.namespace.as_str();
    let near = match list(target, Some(ns)).await {
        Ok(fleets) => crate::text::near::names(
            name,
            fleets.iter().filter_map(|f| f.metadata.name.as_deref()),
        ),
        Err(e @ (Error::CrdsMissing { .. } | Error::NotKubernetes { .. })) => return e,
        Err(_) => Vec::new(),
    };
    // Best effort: a cluster-wide list may well be forbidden.
    let elsewhere = match list(target, None).await {
        Ok(fleets) => fleets
            .iter()
            .filter(|f| f.metadata.name.as_deref() == Some(name))
            .filter_map(|f| f.metadata.namespace.clone())
            .filter(|n| n != ns)
            .collect(),
        Err(_) => Vec::new(),
    };
    Error::FleetNotFound {
        name: name.to_string(),
        namespace: ns.to_string(),
        near,
        elsewhere,
    }
}
