//! After `deploy` or `rollback` changed the deployment pointer: a merge patch of the
//! `platform.celld.dev/deployed-at` annotation on the CelldFleet. The operator reconciles a fleet
//! on any change of it, so it reads the new pointer (status, scale from 0) at once.

use crate::cluster::fleet_context::FleetContext;
use crate::cluster::fleets::RESOURCE;
use crate::error::Error;
use celld_api::CelldFleet;
use celld_api::labels::DEPLOYED_AT;
use kube::Api;
use kube::api::{Patch, PatchParams};

/// The annotation's value for `at`: to the millisecond, so two deploys in the same second
/// differ.
pub fn stamp(at: jiff::Timestamp) -> String {
    at.round(jiff::Unit::Millisecond).unwrap_or(at).to_string()
}

/// The merge patch setting the annotation to `stamp`.
pub fn patch(stamp: &str) -> serde_json::Value {
    serde_json::json!({"metadata": {"annotations": {DEPLOYED_AT: stamp}}})
}

/// Sets the annotation to now and returns its value, which the operator's status echoes once
/// it read the pointer again. A failure is returned as a warning line, not an error: the
/// pointer is written, and the operator reads it within its periodic look anyway.
pub async fn deployed_at(context: &FleetContext) -> Result<String, String> {
    let api: Api<CelldFleet> = Api::namespaced(context.target.client.clone(), context.namespace());
    let params = PatchParams::default();
    let stamp = stamp(jiff::Timestamp::now());
    match api
        .patch(context.name(), &params, &Patch::Merge(patch(&stamp)))
        .await
    {
        Ok(_) => Ok(stamp),
        Err(e) => Err(format!(
            "warning: could not annotate CelldFleet {}/{} with {DEPLOYED_AT} ({}): the operator picks the new version up at its next periodic look instead of at once",
            context.namespace(),
            context.name(),
            Error::api("patch", RESOURCE, Some(context.namespace()), e)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_sets_only_the_annotation() {
        let at: jiff::Timestamp = "2026-11-30T15:19:28.7004Z".parse().unwrap();
        assert_eq!(stamp(at), "2026-11-30T15:19:28.7Z");
        assert_eq!(
            patch(&stamp(at)),
            serde_json::json!({"metadata": {"annotations": {"platform.celld.dev/deployed-at": "2026-11-30T15:19:28.7Z"}}})
        );
    }
}
