//! Writing a fleet's status: computed from what a reconcile observed, written with server-side
//! apply only when it changed, with the Events its changes are worth. Both the reconcile and the
//! [status follower](crate::status::follower) write through here, one at a time per fleet.

use crate::children::MANAGER;
use crate::error::Error;
use crate::fleet::context::Context;
use crate::status::compute::{self, Observed};
use crate::status::events;
use crate::storage::pointer::Pointer;
use celld_api::{CelldFleet, CelldFleetStatus};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;

/// A status that differs from the last one written or read.
pub struct Update {
    /// The status it replaces.
    pub previous: Option<CelldFleetStatus>,
    /// The new status.
    pub status: CelldFleetStatus,
}

/// The status `observed` gives `fleet`, when it differs from the one last written for it.
pub fn next(ctx: &Context, fleet: &CelldFleet, observed: &Observed<'_>) -> Option<Update> {
    let uid = fleet.uid().unwrap_or_default();
    let seen = fleet.resource_version().unwrap_or_default();
    let previous = ctx
        .written_status(&uid, &seen)
        .or_else(|| fleet.status.clone());
    let status = compute::compute(previous.as_ref(), observed, Timestamp::now());
    (previous.as_ref() != Some(&status)).then_some(Update { previous, status })
}

/// Writes `update` to `fleet` and publishes the Events of its failures and transitions.
pub async fn write(
    ctx: &Context,
    fleet: &CelldFleet,
    update: Update,
    observed: &Observed<'_>,
    pointer: Option<&Pointer>,
) -> Result<(), Error> {
    let ns = fleet.namespace().ok_or(Error::Unnamed("CelldFleet"))?;
    let api: Api<CelldFleet> = Api::namespaced(ctx.client.clone(), &ns);
    let patch = json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldFleet",
        "status": update.status,
    });
    api.patch_status(
        &fleet.name_any(),
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map_err(|e| {
        Error::kube(
            format!("writing the status of CelldFleet {}", fleet.name_any()),
            e,
        )
    })?;
    ctx.metrics.write("CelldFleet", "status");
    let uid = fleet.uid().unwrap_or_default();
    let seen = fleet.resource_version().unwrap_or_default();
    ctx.remember_status(&uid, &seen, update.status.clone());
    let previous = update.previous.as_ref();
    events::failures(ctx, fleet, previous, observed.failures).await;
    events::transitions(
        ctx,
        fleet,
        previous,
        &update.status,
        pointer,
        observed.failures,
    )
    .await;
    Ok(())
}
