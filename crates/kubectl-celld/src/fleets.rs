//! Reading CelldFleets with errors that help: missing CRDs, near names, other namespaces.

use crate::error::{Error, Result, is_unknown_resource, status_code};
use crate::kubeconfig::Target;
use celld_api::CelldFleet;
use kube::Api;
use kube::api::ListParams;

/// RBAC name of the fleet resource.
pub const RESOURCE: &str = "celldfleets.platform.celld.dev";

/// Maps an error of a fleet request: unknown resource type means the CRDs are missing.
pub fn fleet_error(verb: &'static str, namespace: Option<&str>, err: kube::Error) -> Error {
    if is_unknown_resource(&err) {
        Error::CrdsMissing {
            resource: "celldfleets",
        }
    } else {
        Error::api(verb, RESOURCE, namespace, err)
    }
}

/// Lists the fleets of one namespace, or of all namespaces when `namespace` is None.
pub async fn list(target: &Target, namespace: Option<&str>) -> Result<Vec<CelldFleet>> {
    let api: Api<CelldFleet> = match namespace {
        Some(ns) => Api::namespaced(target.client.clone(), ns),
        None => Api::all(target.client.clone()),
    };
    let mut fleets = api
        .list(&ListParams::default())
        .await
        .map_err(|e| fleet_error("list", namespace, e))?
        .items;
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
        Err(e) => Err(fleet_error("get", Some(ns), e)),
    }
}

async fn not_found(target: &Target, name: &str) -> Error {
    let ns = target.namespace.as_str();
    let near = match list(target, Some(ns)).await {
        Ok(fleets) => crate::near::names(
            name,
            fleets.iter().filter_map(|f| f.metadata.name.as_deref()),
        ),
        Err(e @ Error::CrdsMissing { .. }) => return e,
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
