//! Shell completion, dynamic: the shells ask the binary itself what fits the word being typed
//! (clap_complete's engine), so fleet names, namespaces and contexts come from the cluster and
//! the kubeconfig as they are now.
//!
//! - `kubectl-celld completion bash|zsh|fish` prints a registration script; the shell then runs
//!   `COMPLETE=<shell> kubectl-celld -- <words>` at each Tab.
//! - `kubectl celld <Tab>` (kubectl 1.26 and later) runs `kubectl_complete-celld <words>`, the
//!   last word being the one to complete: a link to this binary (`make plugin` installs it), which
//!   prints one candidate a line, then cobra's `:<directive>` line ([`kubectl_complete`]).

use crate::error::{Error, Result};
use clap_complete::env::{Bash, EnvCompleter, Fish, Zsh};
use std::ffi::OsString;

/// The binary's file name, which the shells complete.
pub const BIN: &str = "kubectl-celld";

/// The name kubectl looks for on PATH to complete `kubectl celld ...`: a link to this binary,
/// which then answers as [`kubectl_complete`].
pub const KUBECTL_COMPLETE: &str = "kubectl_complete-celld";

/// The environment variable the registration scripts set to ask for completions.
pub const VAR: &str = "COMPLETE";

/// The shells `completion` writes scripts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    /// bash 4 and later
    Bash,
    /// zsh
    Zsh,
    /// fish
    Fish,
}

/// The registration script for `shell`.
pub fn script(shell: Shell) -> Result<String> {
    let completer: &dyn EnvCompleter = match shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
    };
    let mut out = Vec::new();
    completer
        .write_registration(VAR, BIN, BIN, BIN, &mut out)
        .map_err(|e| Error::Output(e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Prints the registration script for `shell`.
pub fn run(shell: Shell) -> Result<u8> {
    crate::text::output::print(&script(shell)?)?;
    Ok(0)
}

/// Cobra's directive: complete no file names.
const NO_FILE_COMP: u8 = 4;
/// Cobra's directive: the shell's default (file names).
const DEFAULT: u8 = 0;

/// What `kubectl_complete-celld WORDS...` prints: the candidates for the last word (`value` or
/// `value<TAB>help`, one a line), then `:4` (no file names), or `:0` when there is no candidate
/// (a directory argument, say), so the shell completes file names. `command` is the command
/// tree to complete, named like the binary.
pub fn kubectl_complete(mut command: clap::Command, words: Vec<OsString>) -> String {
    let mut args = vec![OsString::from(BIN)];
    let index = words.len().max(1);
    args.extend(words);
    if args.len() == 1 {
        args.push(OsString::new());
    }
    let current_dir = std::env::current_dir().ok();
    let candidates =
        clap_complete::engine::complete(&mut command, args, index, current_dir.as_deref())
            .unwrap_or_default();
    let mut out = String::new();
    for c in candidates.iter().filter(|c| !c.is_hide_set()) {
        out.push_str(&c.get_value().to_string_lossy());
        if let Some(help) = c.get_help() {
            let help = help.to_string();
            let first = help.lines().next().unwrap_or_default();
            if !first.is_empty() {
                out.push('\t');
                out.push_str(first);
            }
        }
        out.push('\n');
    }
    let directive = if candidates.is_empty() {
        DEFAULT
    } else {
        NO_FILE_COMP
    };
    out.push_str(&format!(":{directive}\n"));
    out
}
