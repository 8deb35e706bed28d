//! Reading CelldPreviews with errors that help: a preview that does not exist (with similar
//! names), and a cluster whose operator predates previews told apart from one without the
//! celld CRDs at all.

use crate::cluster::fleets;
use crate::cluster::kubeconfig::Target;
use crate::error::preview::PreviewError;
use crate::error::{Error, Result, is_unknown_resource, status_code};
use celld_api::{CelldFleet, CelldPreview};
use kube::api::ListParams;
use kube::{Api, Client};

/// RBAC name of the preview resource.
pub const RESOURCE: &str = "celldpreviews.platform.celld.dev";

/// The previews API of the target namespace.
pub fn api(target: &Target) -> Api<CelldPreview> {
    Api::namespaced(target.client.clone(), &target.namespace)
}

/// Maps an error of a preview request: an unknown resource type means the operator is too old
/// for previews, or that no celld CRD is installed, or that the server is not a Kubernetes API
/// server at all.
pub async fn preview_error(
    client: &Client,
    verb: &'static str,
    namespace: Option<&str>,
    err: kube::Error,
) -> Error {
    if !is_unknown_resource(&err) {
        return Error::api(verb, RESOURCE, namespace, err);
    }
    match fleets::unknown_resource(client, "celldpreviews").await {
        Error::CrdsMissing { .. } => {
            let fleets: Api<CelldFleet> = Api::all(client.clone());
            match fleets.list_metadata(&ListParams::default().limit(1)).await {
                Ok(_) => Error::PreviewsNotInstalled,
                Err(_) => Error::CrdsMissing {
                    resource: "celldpreviews",
                },
            }
        }
        other => other,
    }
}

/// Preview `name` of the target namespace, if it exists.
pub async fn get_opt(target: &Target, name: &str) -> Result<Option<CelldPreview>> {
    match api(target).get_opt(name).await {
        Ok(found) => Ok(found),
        Err(e) => Err(preview_error(&target.client, "get", Some(&target.namespace), e).await),
    }
}

/// Preview `name` of the target namespace; when it does not exist, the error names previews
/// with similar names.
pub async fn get(target: &Target, name: &str) -> Result<CelldPreview> {
    match api(target).get(name).await {
        Ok(preview) => Ok(preview),
        Err(e) if status_code(&e) == Some(404) && !is_unknown_resource(&e) => {
            let near = match list(target, Some(&target.namespace)).await {
                Ok(previews) => crate::text::near::names(
                    name,
                    previews.iter().filter_map(|p| p.metadata.name.as_deref()),
                ),
                Err(_) => Vec::new(),
            };
            Err(PreviewError::NotFound {
                name: name.to_string(),
                namespace: target.namespace.clone(),
                near,
            }
            .into())
        }
        Err(e) => Err(preview_error(&target.client, "get", Some(&target.namespace), e).await),
    }
}

/// The previews of one namespace, or of all namespaces when `namespace` is None, by namespace
/// and name.
pub async fn list(target: &Target, namespace: Option<&str>) -> Result<Vec<CelldPreview>> {
    let api: Api<CelldPreview> = match namespace {
        Some(ns) => Api::namespaced(target.client.clone(), ns),
        None => Api::all(target.client.clone()),
    };
    let mut previews = match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        Err(e) => return Err(preview_error(&target.client, "list", namespace, e).await),
    };
    previews.sort_by(|a, b| {
        (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
    });
    Ok(previews)
}

/// The Ready condition of `preview`, if reported.
pub fn ready(
    preview: &CelldPreview,
) -> Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
    preview
        .status
        .as_ref()
        .and_then(|s| celld_api::conditions::find(&s.conditions, celld_api::conditions::READY))
}
