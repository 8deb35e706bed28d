//! The `kubectl-celld` binary: `kubectl celld ...` once it is on PATH.

use clap::Parser;
use kubectl_celld::cli::Cli;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match kubectl_celld::run(cli).await {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
