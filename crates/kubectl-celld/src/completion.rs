//! `completion SHELL`: shell completion scripts for the `kubectl-celld` binary.

use crate::cli::Cli;
use crate::error::Result;
use clap::CommandFactory;

/// The binary's file name, which the shells complete.
pub const BIN: &str = "kubectl-celld";

/// The completion script for `shell`.
pub fn script(shell: clap_complete::Shell) -> String {
    let mut cmd = Cli::command();
    cmd.set_bin_name(BIN);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Prints the completion script for `shell`.
pub fn run(shell: clap_complete::Shell) -> Result<u8> {
    crate::output::print(&script(shell))?;
    Ok(0)
}
