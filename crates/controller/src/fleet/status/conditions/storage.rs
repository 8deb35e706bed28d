//! StorageResolved and Deployed: whether the object storage resolves, and what the bucket's
//! deployment pointer says.

use super::{Cond, cond};
use crate::buckets::pointer::Pointer;
use crate::fleet::status::observation::{Observed, ObservedStorage};
use celld_api::conditions::{DEPLOYED, STORAGE_RESOLVED};
use celld_api::reasons::Reason;
use celld_api::{CelldFleetStatus, DeploymentStatus};

/// The StorageResolved and Deployed conditions, and the deployment to report: the pointer's,
/// or the last known one (from `previous`) while the bucket cannot be read.
pub fn conditions(
    previous: Option<&CelldFleetStatus>,
    o: &Observed,
) -> ([Cond; 2], Option<DeploymentStatus>) {
    let last_known = || previous.and_then(|p| p.deployment.clone());
    match &o.storage {
        ObservedStorage::Failed(f) => (
            [
                cond(STORAGE_RESOLVED, Some(false), f.reason, f.message.clone()),
                cond(
                    DEPLOYED,
                    None,
                    Reason::StorageUnresolved,
                    "the bucket cannot be read until the storage resolves",
                ),
            ],
            last_known(),
        ),
        ObservedStorage::Resolved(storage, pointer) => {
            let via = storage
                .store
                .as_ref()
                .map_or(String::from("inline connection"), |s| {
                    format!("CelldObjectStore {s}")
                });
            let resolved = cond(
                STORAGE_RESOLVED,
                Some(true),
                Reason::Resolved,
                format!("{} through the {via}", storage.bucket),
            );
            let (deployed, deployment) = match pointer {
                Pointer::Deployed(d) => {
                    let script = d
                        .script_name
                        .as_ref()
                        .map_or(String::new(), |s| format!(" of {s}"));
                    let message = format!("version {}{script} is deployed", d.version);
                    (
                        cond(DEPLOYED, Some(true), Reason::Deployed, message),
                        Some(d.clone()),
                    )
                }
                Pointer::Missing => (
                    cond(
                        DEPLOYED,
                        Some(false),
                        Reason::NoDeployment,
                        format!(
                            "no Worker is deployed at {}/deploy/current.json; celld nodes exit at boot without one, so the fleet stays at 0 nodes until `kubectl celld deploy DIR --fleet {}` publishes one",
                            storage.bucket, o.name
                        ),
                    ),
                    None,
                ),
                Pointer::Unknown(e) => (
                    cond(
                        DEPLOYED,
                        None,
                        Reason::BucketUnreadable,
                        format!("the deployment pointer could not be read: {e}"),
                    ),
                    last_known(),
                ),
                Pointer::NoCredentials(e) => (
                    cond(DEPLOYED, None, Reason::NoOperatorCredentials, e.clone()),
                    last_known(),
                ),
            };
            ([resolved, deployed], deployment)
        }
    }
}
