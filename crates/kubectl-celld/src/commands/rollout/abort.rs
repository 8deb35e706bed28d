//! `rollout abort NAME [--reason TEXT]`: the annotation `platform.celld.dev/rollout-abort`
//! (its value the reason) set with a merge patch. The operator stops the revision for good and,
//! unless spec.onFailure is Halt, points every fleet it moved back at the version it had.

use super::pause::default_reason;
use super::report;
use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::cluster::rollouts;
use crate::error::Result;
use crate::error::rollout::RolloutError;
use crate::text::output;
use celld_api::CelldRollout;
use celld_api::labels::ROLLOUT_ABORT;
use celld_api::rollout::FailurePolicy;
use clap::Args;

/// `rollout abort`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Stop rollout web's revision for good; the fleets it moved go back (unless onFailure: Halt)
  kubectl celld rollout abort web -n tenants --reason \"errors in wave 2\"",
    override_usage = "kubectl celld rollout abort [OPTIONS] <NAME>"
)]
pub struct AbortArgs {
    /// The rollout
    #[arg(value_name = "NAME", add = crate::cluster::complete::rollouts())]
    pub name: String,

    /// Why, for people (the annotation's value) [default: aborted with kubectl celld at TIME]
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// Refuses to abort `rollout` when it has ended for its revision: there is nothing to stop.
pub fn check(rollout: &CelldRollout) -> Result<(), RolloutError> {
    let r = report::build(rollout);
    match (r.ended, r.phase) {
        (true, Some(phase)) => Err(RolloutError::Ended {
            name: r.name,
            namespace: r.namespace,
            phase: phase.as_str(),
            revision: r.revision.unwrap_or(r.source),
            verb: "abort",
        }),
        _ => Ok(()),
    }
}

/// What `abort` tells once the annotation is set, by the rollout's spec.onFailure.
pub fn message(name: &str, ns: &str, reason: &str, on_failure: FailurePolicy) -> String {
    let then = match on_failure {
        FailurePolicy::Rollback => {
            "the operator points every fleet it moved back at the version that fleet served before (spec.onFailure: Rollback)"
        }
        FailurePolicy::Halt => {
            "the fleets it moved keep the new version (spec.onFailure: Halt); go back per fleet with kubectl celld rollback FLEET"
        }
    };
    format!(
        "CelldRollout {ns}/{name} aborted ({ROLLOUT_ABORT}: {reason}): its revision stops for good, no further wave starts, and {then}. Follow it with: kubectl celld rollout status {name} -n {ns} -w\n"
    )
}

/// Runs `rollout abort`.
pub async fn run(cluster: &ConnectArgs, args: AbortArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let rollout = rollouts::get(&target, &args.name).await?;
    check(&rollout)?;
    let reason = args
        .reason
        .unwrap_or_else(|| default_reason("aborted", jiff::Timestamp::now()));
    rollouts::annotate(&target, &args.name, ROLLOUT_ABORT, Some(&reason)).await?;
    output::print(&message(
        &args.name,
        &target.namespace,
        &reason,
        rollout.spec.on_failure,
    ))?;
    Ok(0)
}
