//! Reading CelldRollouts with errors that help (a rollout that does not exist, with similar
//! names; a cluster whose operator predates rollouts told apart from one without the celld
//! CRDs at all), and the merge patches of the annotations `kubectl celld rollout` sets.

use crate::cluster::fleets::{self, FIELD_MANAGER};
use crate::cluster::kubeconfig::Target;
use crate::error::rollout::RolloutError;
use crate::error::{Error, Result, is_unknown_resource, status_code};
use celld_api::{CelldFleet, CelldRollout, RolloutSource};
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, Client};

/// RBAC name of the rollout resource.
pub const RESOURCE: &str = "celldrollouts.platform.celld.dev";

/// The rollouts API of the target namespace.
pub fn api(target: &Target) -> Api<CelldRollout> {
    Api::namespaced(target.client.clone(), &target.namespace)
}

/// Maps an error of a rollout request: an unknown resource type means the operator is too old
/// for rollouts, or that no celld CRD is installed, or that the server is not a Kubernetes API
/// server at all.
pub async fn rollout_error(
    client: &Client,
    verb: &'static str,
    namespace: Option<&str>,
    err: kube::Error,
) -> Error {
    if !is_unknown_resource(&err) {
        return Error::api(verb, RESOURCE, namespace, err);
    }
    match fleets::unknown_resource(client, "celldrollouts").await {
        Error::CrdsMissing { .. } => {
            let fleets: Api<CelldFleet> = Api::all(client.clone());
            match fleets.list_metadata(&ListParams::default().limit(1)).await {
                Ok(_) => RolloutError::not_installed().into(),
                Err(_) => Error::CrdsMissing {
                    resource: "celldrollouts",
                },
            }
        }
        other => other,
    }
}

/// Rollout `name` of the target namespace, if it exists.
pub async fn get_opt(target: &Target, name: &str) -> Result<Option<CelldRollout>> {
    match api(target).get_opt(name).await {
        Ok(found) => Ok(found),
        Err(e) => Err(rollout_error(&target.client, "get", Some(&target.namespace), e).await),
    }
}

/// Rollout `name` of the target namespace; when it does not exist, the error names rollouts
/// with similar names.
pub async fn get(target: &Target, name: &str) -> Result<CelldRollout> {
    match api(target).get(name).await {
        Ok(rollout) => Ok(rollout),
        Err(e) if status_code(&e) == Some(404) && !is_unknown_resource(&e) => {
            let near = match list(target).await {
                Ok(rollouts) => crate::text::near::names(
                    name,
                    rollouts.iter().filter_map(|r| r.metadata.name.as_deref()),
                ),
                Err(_) => Vec::new(),
            };
            Err(RolloutError::NotFound {
                name: name.to_string(),
                namespace: target.namespace.clone(),
                near,
            }
            .into())
        }
        Err(e) => Err(rollout_error(&target.client, "get", Some(&target.namespace), e).await),
    }
}

/// The rollouts of the target namespace, by name.
pub async fn list(target: &Target) -> Result<Vec<CelldRollout>> {
    let mut rollouts = match api(target).list(&ListParams::default()).await {
        Ok(list) => list.items,
        Err(e) => {
            return Err(rollout_error(&target.client, "list", Some(&target.namespace), e).await);
        }
    };
    rollouts.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(rollouts)
}

/// The merge patch setting annotation `key` to `value`, or removing it (None).
pub fn annotation_patch(key: &str, value: Option<&str>) -> serde_json::Value {
    serde_json::json!({"metadata": {"annotations": {key: value}}})
}

/// Sets (`Some(value)`) or removes (None) annotation `key` on rollout `name` of the target
/// namespace, with a merge patch under the plugin's field manager; returns the rollout as
/// written.
pub async fn annotate(
    target: &Target,
    name: &str,
    key: &str,
    value: Option<&str>,
) -> Result<CelldRollout> {
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    match api(target)
        .patch(name, &params, &Patch::Merge(annotation_patch(key, value)))
        .await
    {
        Ok(rollout) => Ok(rollout),
        Err(e) => Err(rollout_error(&target.client, "patch", Some(&target.namespace), e).await),
    }
}

/// The value of annotation `key` on `rollout`, if set.
pub fn annotation<'a>(rollout: &'a CelldRollout, key: &str) -> Option<&'a str> {
    rollout
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// A rollout's source as a user recognises it: `image REFERENCE` or `KIND/NAME` of a Flux
/// source.
pub fn source_name(source: &RolloutSource) -> String {
    match (&source.image, &source.source_ref) {
        (Some(image), _) => format!("image {}", image.reference),
        (None, Some(r)) => format!("{}/{}", r.kind.as_str(), r.name),
        (None, None) => "a source naming neither an image nor a sourceRef".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_set_or_remove_only_the_annotation() {
        assert_eq!(
            annotation_patch(celld_api::labels::ROLLOUT_PAUSED, Some("incident 42")),
            serde_json::json!({"metadata": {"annotations": {"platform.celld.dev/rollout-paused": "incident 42"}}})
        );
        assert_eq!(
            annotation_patch(celld_api::labels::ROLLOUT_PAUSED, None),
            serde_json::json!({"metadata": {"annotations": {"platform.celld.dev/rollout-paused": null}}})
        );
    }
}
