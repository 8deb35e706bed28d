//! The command line: global kubeconfig flags and one subcommand per workflow step.

use crate::cluster::flags::Globals;
use crate::cluster::kubeconfig::ConnectArgs;
use crate::commands::completion;
use crate::commands::{deploy, history, init, logs, preview, rollback, rollout, status, top};
use clap::{Args, CommandFactory, Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  # Upload a local Worker project and make it live on every node of fleet 'web'
  kubectl celld deploy ./my-worker --fleet web -n apps

  # Deploy an image that holds the source at /app
  kubectl celld deploy --image registry.example.com/web-src:1.2.0 --fleet web

  # What a fleet serves, from where, and how its nodes are doing
  kubectl celld status web
  kubectl celld status -A

  # The fleets of every namespace, the most pressed for capacity first
  kubectl celld top -A

  # The versions published for a fleet; go back to the one before the live one
  kubectl celld history web
  kubectl celld rollback web

  # Follow the logs of every node, including nodes that start later
  kubectl celld logs web --follow

  # Ship an image to the fleets labelled app=web in waves: one fleet, a tenth, then the rest
  kubectl celld deploy --selector app=web --waves 1,10%,100% \\
    --image registry.example.com/web-worker:1.4.2@sha256:<digest>
  kubectl celld rollout status web-worker -w

  # A preview of fleet 'web' serving ./my-worker at its own host for 24 hours; its URL
  kubectl celld preview create pr-123 --fleet web ./my-worker --ttl 24h --wait

  # Create (or update) a fleet from flags
  kubectl celld init web --store minio --bucket s3://celld/web \\
    --hostname web.example.com --ingress-class nginx --apply

  # Shell completions
  source <(kubectl-celld completion bash)";

/// kubectl plugin for celld fleets: deploy Workers, inspect fleets, stream node logs, and
/// bootstrap new fleets.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-celld",
    bin_name = "kubectl celld",
    version,
    after_help = EXAMPLES,
    propagate_version = true,
    arg_required_else_help = true,
    max_term_width = 100
)]
pub struct Cli {
    /// How to reach the cluster.
    #[command(flatten)]
    pub globals: Globals,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The command tree, named like the binary: what the shell-completion engine completes.
pub fn command() -> clap::Command {
    Cli::command().bin_name(completion::BIN)
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Deploy a Worker to a fleet's bucket and make every ready node adopt it now
    Deploy(Box<deploy::DeployArgs>),
    /// Show one fleet in detail, or a table of the fleets in the namespace
    Status(status::StatusArgs),
    /// List fleets by pressure: activations waiting for capacity, pressured nodes, headroom
    Top(top::TopArgs),
    /// Print the logs of every node of a fleet, each line prefixed with its pod
    Logs(logs::LogsArgs),
    /// List the Worker versions published for a fleet, newest first, the live one marked
    History(history::HistoryArgs),
    /// Point a fleet back at an earlier version and make every ready node adopt it now
    Rollback(rollback::RollbackArgs),
    /// Print a CelldFleet built from flags, or create/update it with --apply
    Init(Box<init::InitArgs>),
    /// Create, list, show and delete previews: short-lived copies of a fleet
    Preview(preview::PreviewArgs),
    /// Show, pause, resume, promote and abort rollouts: one Worker shipped to many fleets in waves
    Rollout(rollout::RolloutArgs),
    /// Print a shell completion script
    Completion(CompletionArgs),
}

/// `completion SHELL`: the script completes `kubectl-celld ...`; `kubectl celld ...` is completed
/// through the `kubectl_complete-celld` executable installed next to the plugin.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # bash (current shell, or for good: add the line to ~/.bashrc)
  source <(kubectl-celld completion bash)

  # zsh (add the line to ~/.zshrc)
  source <(kubectl-celld completion zsh)

  # fish
  kubectl-celld completion fish > ~/.config/fish/completions/kubectl-celld.fish",
    override_usage = "kubectl celld completion [OPTIONS] <SHELL>"
)]
pub struct CompletionArgs {
    /// The shell to complete in
    #[arg(value_enum)]
    pub shell: completion::Shell,
}

impl Command {
    /// Runs the command against the cluster that `cluster` names; returns the process exit code.
    pub async fn run(self, cluster: &ConnectArgs) -> crate::error::Result<u8> {
        match self {
            Command::Deploy(args) => deploy::run(cluster, *args).await,
            Command::Status(args) => status::run(cluster, args).await,
            Command::Top(args) => top::run(cluster, args).await,
            Command::Logs(args) => logs::run(cluster, args).await,
            Command::History(args) => history::run(cluster, args).await,
            Command::Rollback(args) => rollback::run(cluster, args).await,
            Command::Init(args) => init::run(cluster, &args).await,
            Command::Preview(args) => preview::run(cluster, args).await,
            Command::Rollout(args) => rollout::run(cluster, args).await,
            Command::Completion(args) => completion::run(args.shell),
        }
    }
}
