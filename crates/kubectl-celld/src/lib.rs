//! `kubectl celld`: a kubectl plugin for celld fleets. Deploys Workers into a fleet's bucket
//! from a short-lived in-cluster pod and makes the nodes adopt them at once, shows a fleet's
//! state, streams its node logs, and builds new fleets from flags.
//!
//! The binary is a thin `main`; everything lives here so tests can drive it.

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
