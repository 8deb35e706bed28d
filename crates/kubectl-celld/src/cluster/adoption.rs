//! After `deploy` or `rollback` changed the deployment pointer: waiting until every ready node
//! serves the version, as the operator reports it. The operator reads the pointer again when
//! the plugin's deployed-at annotation changes and records that annotation beside the version
//! it read (`status.deployment.observedDeployedAt`), then reads each node's state: its Adopted
//! condition says when every ready node serves the version, or which nodes refused it and why.

use crate::cluster::fleet_context::FleetContext;
use crate::cluster::fleets::RESOURCE;
use crate::error::{Error, Result};
use crate::text::progress::Progress;
use celld_api::CelldFleet;
use celld_api::conditions::{self, ADOPTED};
use celld_api::reasons::Reason;
use clap::Args;
use kube::Api;
use std::time::{Duration, Instant};

/// How often the fleet is read while waiting.
const POLL: Duration = Duration::from_secs(1);

/// The Adopted reason of a refusal, as the operator writes it.
const REFUSED: &str = Reason::VersionRefused.as_str();

/// The flags of the wait.
#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    /// Do not wait until every ready node serves the new version
    #[arg(long)]
    pub no_wait: bool,

    /// How long to wait until every ready node serves the new version (as the operator reports
    /// it); the version stays published when the wait ends
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::text::parse::duration)]
    pub wait_timeout: Duration,
}

/// Where the wait stands, from the fleet as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The operator has not read the pointer since the deploy.
    NotRead,
    /// Every ready node serves `version`: the condition's message.
    Adopted(String),
    /// Some nodes refused the version: the condition's message.
    Refused(String),
    /// Still on its way: the condition's message (or why there is none yet).
    Waiting(String),
}

/// Where the wait for the deploy stamped `stamp` stands on `fleet`.
pub fn standing(fleet: &CelldFleet, stamp: &str) -> Standing {
    let Some(status) = fleet.status.as_ref() else {
        return Standing::NotRead;
    };
    let answered = status
        .deployment
        .as_ref()
        .and_then(|d| d.observed_deployed_at.as_deref())
        == Some(stamp);
    if !answered {
        return Standing::NotRead;
    }
    match conditions::find(&status.conditions, ADOPTED) {
        Some(c) if c.status == "True" => Standing::Adopted(c.message.clone()),
        Some(c) if c.reason == REFUSED => Standing::Refused(c.message.clone()),
        Some(c) => Standing::Waiting(format!("{}: {}", c.reason, c.message)),
        None => Standing::Waiting("the operator reports no Adopted condition yet".into()),
    }
}

/// Waits until the operator reports every ready node of the fleet serving the version the
/// deploy stamped `stamp` published, within `timeout`, with a progress line whenever where it
/// stands changes.
pub async fn wait(
    context: &FleetContext,
    stamp: &str,
    timeout: Duration,
    progress: &mut Progress,
) -> Result<()> {
    let api: Api<CelldFleet> = Api::namespaced(context.target.client.clone(), context.namespace());
    let started = Instant::now();
    let mut last: Option<Standing> = None;
    loop {
        let fleet = api
            .get(context.name())
            .await
            .map_err(|e| Error::api("get", RESOURCE, Some(context.namespace()), e))?;
        let now = standing(&fleet, stamp);
        match &now {
            Standing::Adopted(message) => {
                progress.note(&format!("Adopted: {message}"));
                return Ok(());
            }
            Standing::Refused(message) => {
                return Err(Error::NotAdopted {
                    fleet: context.name().to_string(),
                    namespace: context.namespace().to_string(),
                    message: message.clone(),
                });
            }
            Standing::NotRead | Standing::Waiting(_) if last.as_ref() != Some(&now) => {
                progress.note(&match &now {
                    Standing::Waiting(message) => format!("Waiting for the nodes: {message}"),
                    _ => "Waiting for the operator to read the new version".to_string(),
                });
            }
            Standing::NotRead | Standing::Waiting(_) => {}
        }
        if started.elapsed() >= timeout {
            return Err(Error::AdoptionTimedOut {
                fleet: context.name().to_string(),
                namespace: context.namespace().to_string(),
                waited: timeout,
                last: match now {
                    Standing::Waiting(message) => message,
                    _ => "the operator has not reported reading the new version (is celld-operator running and watching this namespace?)".into(),
                },
            });
        }
        last = Some(now);
        tokio::time::sleep(POLL).await;
    }
}

/// Waits, unless told not to, until every ready node serves the version the deploy or
/// rollback stamped `stamp` published; without a stamp (the annotation could not be set) the
/// operator's status cannot be matched to this deploy, so there is no wait.
pub async fn unless_told_not_to(
    context: &FleetContext,
    stamp: Option<String>,
    flags: &WaitArgs,
    progress: &mut Progress,
) -> Result<()> {
    match stamp {
        Some(stamp) if !flags.no_wait => wait(context, &stamp, flags.wait_timeout, progress).await,
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{CelldFleetSpec, CelldFleetStatus, DeploymentStatus};
    use k8s_openapi::jiff::Timestamp;

    fn fleet(stamp: Option<&str>, adopted: Option<(&str, &str)>) -> CelldFleet {
        let mut fleet = CelldFleet::new("web", CelldFleetSpec::with_bucket("s3://b/web"));
        fleet.status = Some(CelldFleetStatus {
            deployment: Some(DeploymentStatus {
                version: "00000000000000c2".into(),
                observed_deployed_at: stamp.map(str::to_string),
                ..DeploymentStatus::default()
            }),
            conditions: adopted
                .map(|(status, reason)| {
                    conditions::make(
                        &[],
                        ADOPTED,
                        match status {
                            "True" => Some(true),
                            "False" => Some(false),
                            _ => None,
                        },
                        reason,
                        "said",
                        Some(1),
                        Timestamp::UNIX_EPOCH,
                    )
                })
                .into_iter()
                .collect(),
            ..CelldFleetStatus::default()
        });
        fleet
    }

    #[test]
    fn only_the_status_that_answers_this_deploy_counts() {
        let stamp = "2026-12-02T10:00:00.123Z";
        assert_eq!(
            standing(
                &fleet(Some("2026-12-01T09:00:00Z"), Some(("True", "Adopted"))),
                stamp
            ),
            Standing::NotRead
        );
        assert_eq!(
            standing(&fleet(Some(stamp), Some(("True", "Adopted"))), stamp),
            Standing::Adopted("said".into())
        );
        assert_eq!(
            standing(&fleet(Some(stamp), Some(("False", REFUSED))), stamp),
            Standing::Refused("said".into())
        );
        assert_eq!(
            standing(&fleet(Some(stamp), Some(("False", "Adopting"))), stamp),
            Standing::Waiting("Adopting: said".into())
        );
        assert_eq!(
            standing(
                &fleet(Some(stamp), Some(("Unknown", "NodeStateUnreadable"))),
                stamp
            ),
            Standing::Waiting("NodeStateUnreadable: said".into())
        );
        assert_eq!(
            standing(
                &CelldFleet::new("web", CelldFleetSpec::with_bucket("s3://b/w")),
                stamp
            ),
            Standing::NotRead
        );
    }
}
