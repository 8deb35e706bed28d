//! `kubectl celld`: a kubectl plugin for celld fleets. Deploys Workers into a fleet's bucket
//! from a short-lived in-cluster pod and makes the nodes adopt them at once, shows a fleet's
//! state, streams its node logs, builds new fleets from flags, and manages previews.
//!
//! The binary is a thin `main`; everything lives here so tests can drive it. The modules form
//! a stack, each using only the ones below it:
//!
//! - [`cli`]: the command line, and which command runs;
//! - [`commands`]: one module per subcommand, none using another but `preview`, which deploys
//!   as `deploy` does;
//! - [`bucket`]: the fleet's bucket prefix (pointers, manifests, published versions), read and
//!   written through a deploy pod;
//! - [`pod`]: the deploy pod (its Job, start, tool check, and the node reload run in it);
//! - [`cluster`]: the cluster flags and kubeconfig, fleets, node pods, `pods/exec`, completion
//!   candidates;
//! - [`text`]: output formats, tables, human units, flag-value parsing, progress lines;
//! - [`error`]: every error, each saying what to do.

pub mod bucket;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod error;
pub mod pod;
pub mod text;

use cli::Cli;
use cluster::kubeconfig::{self, ConnectArgs};

/// Runs the parsed command line; returns the process exit code.
pub async fn run(cli: Cli) -> error::Result<u8> {
    let cluster = ConnectArgs::from(&cli.globals);
    match cli.command.run(&cluster).await {
        Err(e @ (error::Error::Unreachable { .. } | error::Error::NotKubernetes { .. })) => {
            Err(e.with_server(kubeconfig::server_offline(&cluster).await))
        }
        other => other,
    }
}
