//! `init --apply`: server-side apply under the field manager `kubectl-celld`, so a second run
//! updates the fleet to the new flags instead of failing because it exists.

use super::build::Built;
use super::hints;
use crate::cluster::fleets::fleet_error;
use crate::cluster::kubeconfig::Target;
use crate::error::{Error, Result, status_code};
use celld_api::CelldFleet;
use kube::Api;
use kube::api::{Patch, PatchParams};

/// The field manager of `init --apply`: the plugin's.
pub const FIELD_MANAGER: &str = crate::cluster::fleets::FIELD_MANAGER;

/// What the apply did, as kubectl says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The fleet did not exist.
    Created,
    /// The fleet changed.
    Configured,
    /// The fleet already was like this.
    Unchanged,
}

impl Outcome {
    /// kubectl's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Configured => "configured",
            Self::Unchanged => "unchanged",
        }
    }
}

/// Applies `built` in the target namespace. An update is checked first with the transition
/// rules against the live fleet.
pub async fn apply(target: &Target, built: &Built, force: bool) -> Result<Outcome> {
    let ns = target.namespace.as_str();
    let name = built.fleet.metadata.name.clone().unwrap_or_default();
    let api: Api<CelldFleet> = Api::namespaced(target.client.clone(), ns);
    let live = match api.get_opt(&name).await {
        Ok(live) => live,
        Err(e) => return Err(fleet_error(&target.client, "get", Some(ns), e).await),
    };
    if let Some(old) = &live {
        celld_api::validate::fleet_update(&built.fleet, old)
            .map_err(|e| Error::InvalidSpec(hints::explain(&e)))?;
    }
    let mut params = PatchParams::apply(FIELD_MANAGER);
    if force {
        params = params.force();
    }
    let applied = match api
        .patch(&name, &params, &Patch::Apply(&built.document))
        .await
    {
        Ok(applied) => applied,
        Err(e) => return Err(patch_error(&target.client, ns, e).await),
    };
    Ok(match live {
        None => Outcome::Created,
        Some(old) if old.metadata.resource_version == applied.metadata.resource_version => {
            Outcome::Unchanged
        }
        Some(_) => Outcome::Configured,
    })
}

async fn patch_error(client: &kube::Client, ns: &str, e: kube::Error) -> Error {
    match status_code(&e) {
        Some(409) => Error::InvalidSpec(format!(
            "another field manager owns fields this apply sets ({}): re-run with --force-conflicts to take them over, or change them with the tool that set them",
            api_message(&e)
        )),
        Some(422) => Error::InvalidSpec(format!(
            "the API server refused the fleet: {}",
            api_message(&e)
        )),
        _ => fleet_error(client, "patch", Some(ns), e).await,
    }
}

fn api_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => s.message.clone(),
        other => crate::error::kube_error::describe(other),
    }
}

/// kubectl's line for the outcome.
pub fn line(name: &str, outcome: Outcome) -> String {
    format!("celldfleet.platform.celld.dev/{name} {}", outcome.as_str())
}
