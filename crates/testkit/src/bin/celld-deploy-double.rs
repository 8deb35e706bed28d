//! `celld-deploy-double`: a test double of `celld deploy` for the local control plane only (see
//! [`celld_testkit::deploy_double`]). Exit code 0 on success, 1 when the deploy failed (a lost
//! compare-and-swap race included), 2 for a bad command line.

use std::process::ExitCode;

use celld_testkit::deploy_double::args::{Cli, Command};
use celld_testkit::deploy_double::run;
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::Deploy(args) = cli.command;
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("celld-deploy-double: error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run::deploy(&args)) {
        Ok(report) => {
            if args.json {
                match serde_json::to_string_pretty(&report) {
                    Ok(json) => println!("{json}"),
                    Err(e) => {
                        eprintln!("celld-deploy-double: error: cannot print the report: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("celld-deploy-double: error: {e}");
            ExitCode::FAILURE
        }
    }
}
