//! `preview`: short-lived copies of a fleet, each a CelldPreview the operator serves from a
//! fleet of its own at `<name>.<baseDomain>` until its TTL. `create` applies the preview, waits
//! for its fleet and deploys a Worker to it as `deploy` does; `list`, `status` and `delete`
//! read and remove previews.
//!
//! The one command that uses another: `create` runs `deploy` with the command line it builds
//! (see [`deploy_line`]), so a preview gets exactly what `kubectl celld deploy DIR --fleet
//! NAME` would publish.

pub mod apply;
pub mod create;
pub mod delete;
pub mod deploy_line;
pub mod list;
pub mod report;
pub mod status;
pub mod wait;

use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::Result;
use clap::{Args, Subcommand};

/// `preview`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Build ./my-worker and serve it at pr-123.<baseDomain> for 24 hours, as a copy of fleet web
  kubectl celld preview create pr-123 --fleet web ./my-worker --ttl 24h --wait

  # Every preview of the namespace: age, TTL left, version, URL
  kubectl celld preview list

  # One preview: phase, URL, fleet, bucket, expiry, conditions
  kubectl celld preview status pr-123

  # Delete it now, with its fleet and data
  kubectl celld preview delete pr-123 --wait",
    override_usage = "kubectl celld preview <COMMAND>"
)]
pub struct PreviewArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: PreviewCommand,
}

/// The `preview` subcommands.
#[derive(Debug, Subcommand)]
pub enum PreviewCommand {
    /// Create (or update) a preview of a fleet, deploy a Worker to it and print its URL
    Create(Box<create::CreateArgs>),
    /// List the previews: fleet, phase, age, TTL left, version and URL
    List(list::ListArgs),
    /// Show one preview: phase, URL, fleet, bucket, version, expiry and conditions
    Status(status::StatusArgs),
    /// Delete a preview; the operator deletes its fleet and empties its bucket prefix first
    Delete(delete::DeleteArgs),
}

/// Runs `preview`; returns the process exit code.
pub async fn run(cluster: &ConnectArgs, args: PreviewArgs) -> Result<u8> {
    match args.command {
        PreviewCommand::Create(args) => create::run(cluster, *args).await,
        PreviewCommand::List(args) => list::run(cluster, args).await,
        PreviewCommand::Status(args) => status::run(cluster, args).await,
        PreviewCommand::Delete(args) => delete::run(cluster, args).await,
    }
}
