//! `rollout pause NAME` and `rollout resume NAME`: the annotation
//! `platform.celld.dev/rollout-paused` (its value the reason), which GitOps tools leave alone,
//! set and removed with a merge patch. A rollout paused in its spec (spec.paused) stays paused
//! after `resume`: that pause is changed where the rollout is managed.

use super::report::{self, RolloutReport};
use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::cluster::rollouts;
use crate::error::Result;
use crate::text::output;
use celld_api::labels::ROLLOUT_PAUSED;
use clap::Args;

/// `rollout pause`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Hold rollout web: no fleet starts publishing and no wave passes
  kubectl celld rollout pause web -n tenants --reason \"incident 42\"

  # Let it go on
  kubectl celld rollout resume web -n tenants",
    override_usage = "kubectl celld rollout pause [OPTIONS] <NAME>"
)]
pub struct PauseArgs {
    /// The rollout
    #[arg(value_name = "NAME", add = crate::cluster::complete::rollouts())]
    pub name: String,

    /// Why, for people (the annotation's value) [default: paused with kubectl celld at TIME]
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

/// `rollout resume`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Remove the pause kubectl celld rollout pause set
  kubectl celld rollout resume web -n tenants",
    override_usage = "kubectl celld rollout resume [OPTIONS] <NAME>"
)]
pub struct ResumeArgs {
    /// The rollout
    #[arg(value_name = "NAME", add = crate::cluster::complete::rollouts())]
    pub name: String,
}

/// The value an annotation gets when no `--reason` is given: what did it, and when.
pub fn default_reason(done: &str, at: jiff::Timestamp) -> String {
    let at = at.round(jiff::Unit::Second).unwrap_or(at);
    format!("{done} with kubectl celld at {at}")
}

/// What `pause` tells once the annotation is set on the rollout `r` reports.
pub fn paused_message(r: &RolloutReport, reason: &str) -> String {
    let (name, ns) = (&r.name, &r.namespace);
    let mut out = format!(
        "CelldRollout {ns}/{name} paused ({ROLLOUT_PAUSED}: {reason}): no fleet starts publishing and no wave passes; fleets already publishing finish. Resume it with: kubectl celld rollout resume {name} -n {ns}\n"
    );
    if let (true, Some(phase)) = (r.ended, r.phase) {
        out.push_str(&format!(
            "It has ended ({}) for its revision: the pause holds the next revision, once one comes\n",
            phase.as_str()
        ));
    }
    out
}

/// What `resume` tells: whether it removed the annotation (which said `removed`), and whether
/// the rollout stays paused by its spec (`spec_paused`).
pub fn resumed_message(name: &str, ns: &str, removed: Option<&str>, spec_paused: bool) -> String {
    let stays = "it stays paused: its spec.paused is true. Set spec.paused: false where the rollout is managed (in git), and let the GitOps tool apply it";
    match (removed, spec_paused) {
        (Some(reason), false) => format!(
            "CelldRollout {ns}/{name} resumed: removed {ROLLOUT_PAUSED} (it said: {reason})\n"
        ),
        (Some(reason), true) => format!(
            "Removed {ROLLOUT_PAUSED} from CelldRollout {ns}/{name} (it said: {reason}), but {stays}\n"
        ),
        (None, true) => {
            format!("CelldRollout {ns}/{name} has no annotation {ROLLOUT_PAUSED}, and {stays}\n")
        }
        (None, false) => format!(
            "CelldRollout {ns}/{name} is not paused (no annotation {ROLLOUT_PAUSED}, spec.paused is false): nothing to resume\n"
        ),
    }
}

/// Runs `rollout pause`.
pub async fn pause(cluster: &ConnectArgs, args: PauseArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    rollouts::get(&target, &args.name).await?;
    let reason = args
        .reason
        .unwrap_or_else(|| default_reason("paused", jiff::Timestamp::now()));
    let written = rollouts::annotate(&target, &args.name, ROLLOUT_PAUSED, Some(&reason)).await?;
    output::print(&paused_message(&report::build(&written), &reason))?;
    Ok(0)
}

/// Runs `rollout resume`.
pub async fn resume(cluster: &ConnectArgs, args: ResumeArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let rollout = rollouts::get(&target, &args.name).await?;
    let removed = rollouts::annotation(&rollout, ROLLOUT_PAUSED).map(str::to_string);
    if removed.is_some() {
        rollouts::annotate(&target, &args.name, ROLLOUT_PAUSED, None).await?;
    }
    output::print(&resumed_message(
        &args.name,
        &target.namespace,
        removed.as_deref(),
        rollout.spec.paused,
    ))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_reason_says_what_and_when() {
        let at: jiff::Timestamp = "2026-11-30T15:19:28.7004Z".parse().unwrap();
        insta::assert_snapshot!(default_reason("paused", at), @"paused with kubectl celld at 2026-11-30T15:19:29Z");
    }

    #[test]
    fn resume_says_when_the_spec_keeps_the_rollout_paused() {
        insta::assert_snapshot!(resumed_message("web", "tenants", Some("incident 42"), false), @"CelldRollout tenants/web resumed: removed platform.celld.dev/rollout-paused (it said: incident 42)");
        insta::assert_snapshot!(resumed_message("web", "tenants", Some("incident 42"), true), @"Removed platform.celld.dev/rollout-paused from CelldRollout tenants/web (it said: incident 42), but it stays paused: its spec.paused is true. Set spec.paused: false where the rollout is managed (in git), and let the GitOps tool apply it");
        insta::assert_snapshot!(resumed_message("web", "tenants", None, true), @"CelldRollout tenants/web has no annotation platform.celld.dev/rollout-paused, and it stays paused: its spec.paused is true. Set spec.paused: false where the rollout is managed (in git), and let the GitOps tool apply it");
        insta::assert_snapshot!(resumed_message("web", "tenants", None, false), @"CelldRollout tenants/web is not paused (no annotation platform.celld.dev/rollout-paused, spec.paused is false): nothing to resume");
    }
}
