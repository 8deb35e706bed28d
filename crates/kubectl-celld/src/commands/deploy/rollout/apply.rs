//! Applying the rollout: server-side apply under the plugin's field manager, without taking
//! over fields another manager (a GitOps tool) owns, so a rollout managed from git is changed
//! there; a second deploy of the same name updates the rollout (a new image is a new revision,
//! which starts again from the first wave).

use crate::cluster::fleets::FIELD_MANAGER;
use crate::cluster::kubeconfig::Target;
use crate::cluster::rollouts;
use crate::error::Result;
use crate::error::rollout::RolloutError;
use celld_api::CelldRollout;
use kube::api::{Patch, PatchParams};
use serde_json::Value;

/// kubectl's word for what the apply did: `created`, `configured` or `unchanged`.
pub fn outcome(before: Option<&CelldRollout>, after: &CelldRollout) -> &'static str {
    match before {
        None => "created",
        Some(old) if old.metadata.resource_version == after.metadata.resource_version => {
            "unchanged"
        }
        Some(_) => "configured",
    }
}

/// Applies `body` as rollout `name` of the target namespace; a refusal of the API server and
/// a conflict with another field manager are errors carrying its message.
pub async fn apply(target: &Target, name: &str, body: &Value) -> Result<CelldRollout> {
    let ns = target.namespace.as_str();
    let params = PatchParams::apply(FIELD_MANAGER);
    match rollouts::api(target)
        .patch(name, &params, &Patch::Apply(body))
        .await
    {
        Ok(rollout) => Ok(rollout),
        Err(kube::Error::Api(status)) if status.code == 409 => Err(RolloutError::Conflict {
            name: name.to_string(),
            namespace: ns.to_string(),
            message: status.message,
        }
        .into()),
        Err(kube::Error::Api(status)) if matches!(status.code, 400 | 422) => {
            Err(RolloutError::Refused {
                name: name.to_string(),
                namespace: ns.to_string(),
                message: status.message,
            }
            .into())
        }
        Err(e) => Err(rollouts::rollout_error(&target.client, "patch", Some(ns), e).await),
    }
}
