//! `rollout`: a CelldRollout, which ships one Worker to many fleets of a namespace in waves,
//! as the operator reports it (`status`), and the annotations a person sets on it outside git
//! (`pause`, `resume`, `promote`, `abort`), which GitOps tools leave alone. `kubectl celld
//! deploy --selector ... --waves ... --image ...` creates one.

pub mod abort;
pub mod pause;
pub mod promote;
pub mod render;
pub mod report;
pub mod status;

use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::Result;
use clap::{Args, Subcommand};

/// `rollout`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Ship an image to the fleets labelled app=web: one fleet, then a tenth, then the rest
  kubectl celld deploy --selector app=web --waves 1,10%,100% --bake 10m \\
    --image registry.example.com/web-worker:1.4.2@sha256:<digest> -n tenants

  # Where it stands: each wave and its fleets; -w until it has ended
  kubectl celld rollout status web-worker -n tenants -w

  # Hold it, and let it go on
  kubectl celld rollout pause web-worker --reason \"incident 42\"
  kubectl celld rollout resume web-worker

  # Start the wave waiting for approval (or end the current wave's bake)
  kubectl celld rollout promote web-worker

  # Stop its revision for good; the fleets it moved go back
  kubectl celld rollout abort web-worker --reason \"errors in wave 2\"",
    override_usage = "kubectl celld rollout <COMMAND>"
)]
pub struct RolloutArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: RolloutCommand,
}

/// The `rollout` subcommands.
#[derive(Debug, Subcommand)]
pub enum RolloutCommand {
    /// Show a rollout: phase, revision, each wave and its fleets, skipped fleets
    Status(status::StatusArgs),
    /// Hold a rollout: no fleet starts publishing and no wave passes
    Pause(pause::PauseArgs),
    /// Let a rollout paused with `pause` go on
    Resume(pause::ResumeArgs),
    /// Start the next wave without waiting for approval, and end the current wave's bake
    Promote(promote::PromoteArgs),
    /// Stop a rollout's revision for good, rolling back the fleets it moved
    Abort(abort::AbortArgs),
}

/// Runs `rollout`; returns the process exit code.
pub async fn run(cluster: &ConnectArgs, args: RolloutArgs) -> Result<u8> {
    match args.command {
        RolloutCommand::Status(args) => status::run(cluster, args).await,
        RolloutCommand::Pause(args) => pause::pause(cluster, args).await,
        RolloutCommand::Resume(args) => pause::resume(cluster, args).await,
        RolloutCommand::Promote(args) => promote::run(cluster, args).await,
        RolloutCommand::Abort(args) => abort::run(cluster, args).await,
    }
}
