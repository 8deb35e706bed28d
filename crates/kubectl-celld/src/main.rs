//! The `kubectl-celld` binary: `kubectl celld ...` once it is on PATH.

use clap::Parser;
use kubectl_celld::cli::{self, Cli};
use kubectl_celld::commands::completion;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Run as `kubectl_complete-celld WORDS` (a link to this binary): kubectl's plugin completion.
    let mut args = std::env::args_os();
    let invoked = args.next().map(std::path::PathBuf::from);
    if invoked
        .as_deref()
        .and_then(std::path::Path::file_name)
        .is_some_and(|name| name == completion::KUBECTL_COMPLETE)
    {
        let out = completion::kubectl_complete(cli::command(), args.collect());
        // A closed pipe is the shell's business; there is nothing to report to.
        let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
        return ExitCode::SUCCESS;
    }
    // `COMPLETE=<shell> kubectl-celld -- WORDS`: print the candidates and exit.
    clap_complete::CompleteEnv::with_factory(cli::command)
        .var(completion::VAR)
        .bin(completion::BIN)
        .complete();
    // A release builds in its deployer images' digests (CELLD_DEPLOYER_DIGESTS at build time).
    let digests = option_env!("CELLD_DEPLOYER_DIGESTS").unwrap_or_default();
    match celld_api::contract::deployer::DeployerDigests::parse(digests) {
        Ok(digests) => {
            celld_api::contract::deployer::pin_digests(digests);
        }
        Err(e) => {
            eprintln!("kubectl-celld: this build's deployer digests are broken: {e}");
            return ExitCode::FAILURE;
        }
    }
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(kubectl_celld::run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
