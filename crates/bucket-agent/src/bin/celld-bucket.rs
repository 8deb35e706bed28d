//! `celld-bucket`: see [`celld_bucket`]. Prints one JSON answer on stdout; exit code 0 when the
//! operation ran (a missing object and a lost compare-and-swap included), 1 when it failed, 2
//! for a bad command line.

use std::process::ExitCode;

use celld_bucket::cli::{self, Cli};
use celld_bucket::wire::Answer;
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let answer = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime
            .block_on(cli::run(&cli.command))
            .unwrap_or_else(|e| Answer::Failed {
                error: e.to_string(),
            }),
        Err(e) => Answer::Failed {
            error: format!("cannot start the async runtime: {e}"),
        },
    };
    println!("{}", answer.to_line());
    match answer {
        Answer::Failed { .. } => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    }
}
