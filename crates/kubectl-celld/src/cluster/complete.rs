//! Candidates read from the cluster and the kubeconfig: fleet, preview and rollout names (in the
//! namespace of the command line's `-n`, else the context's), namespaces and kubeconfig contexts. The connection
//! flags typed so far (`--kubeconfig`, `--context`, `--cluster`, `--user`, `-n`) are honoured.
//! A cluster that does not answer within [`LIMIT`] gives no candidates, never an error.

use crate::cluster::kubeconfig::{self, ConnectArgs};
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::ListParams;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

/// Longest wait for the cluster during a completion.
pub const LIMIT: Duration = Duration::from_secs(3);

/// The connection flags among `words` (the command line being completed).
pub fn connect_args_from(words: &[String]) -> ConnectArgs {
    let mut g = ConnectArgs::default();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with('-') => (f, Some(v.to_string())),
            _ => (word.as_str(), None),
        };
        let known = matches!(
            flag,
            "--kubeconfig" | "--context" | "--cluster" | "--user" | "-n" | "--namespace"
        );
        if !known {
            i += 1;
            continue;
        }
        let value = match inline {
            Some(v) => Some(v),
            None => {
                i += 1;
                words.get(i).cloned()
            }
        };
        match flag {
            "--kubeconfig" => g.kubeconfig = value.map(PathBuf::from),
            "--context" => g.context = value,
            "--cluster" => g.cluster = value,
            "--user" => g.user = value,
            _ => g.namespace = value,
        }
        i += 1;
    }
    g
}

/// The process's own command line: the words being completed are in it, both for
/// `COMPLETE=bash kubectl-celld -- WORDS` and `kubectl_complete-celld WORDS`.
fn typed() -> ConnectArgs {
    let words: Vec<String> = std::env::args().skip(1).collect();
    connect_args_from(&words)
}

/// Runs `work` on a fresh runtime, bounded by [`LIMIT`]; nothing on any failure.
fn block<F: std::future::Future<Output = Vec<String>>>(work: F) -> Vec<String> {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    runtime
        .block_on(async { tokio::time::timeout(LIMIT, work).await })
        .unwrap_or_default()
}

/// Those of `names` that start with `current`, as candidates.
pub fn matching(names: Vec<String>, current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    names
        .into_iter()
        .filter(|n| n.starts_with(current.as_ref()))
        .map(CompletionCandidate::new)
        .collect()
}

fn fleet_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let args = typed();
    let names = block(async move {
        let Ok(target) = kubeconfig::connect(&args).await else {
            return Vec::new();
        };
        crate::cluster::fleets::list(&target, Some(&target.namespace))
            .await
            .map(|fleets| fleets.into_iter().filter_map(|f| f.metadata.name).collect())
            .unwrap_or_default()
    });
    matching(names, current)
}

fn preview_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let args = typed();
    let names = block(async move {
        let Ok(target) = kubeconfig::connect(&args).await else {
            return Vec::new();
        };
        crate::cluster::previews::list(&target, Some(&target.namespace))
            .await
            .map(|previews| {
                previews
                    .into_iter()
                    .filter_map(|p| p.metadata.name)
                    .collect()
            })
            .unwrap_or_default()
    });
    matching(names, current)
}

fn rollout_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let args = typed();
    let names = block(async move {
        let Ok(target) = kubeconfig::connect(&args).await else {
            return Vec::new();
        };
        crate::cluster::rollouts::list(&target)
            .await
            .map(|rollouts| {
                rollouts
                    .into_iter()
                    .filter_map(|r| r.metadata.name)
                    .collect()
            })
            .unwrap_or_default()
    });
    matching(names, current)
}

fn namespace_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let args = typed();
    let names = block(async move {
        let Ok(target) = kubeconfig::connect(&args).await else {
            return Vec::new();
        };
        let api: Api<Namespace> = Api::all(target.client);
        api.list_metadata(&ListParams::default())
            .await
            .map(|l| {
                l.items
                    .into_iter()
                    .filter_map(|n| n.metadata.name)
                    .collect()
            })
            .unwrap_or_default()
    });
    matching(names, current)
}

fn context_names(current: &OsStr) -> Vec<CompletionCandidate> {
    matching(kubeconfig::contexts(&typed()), current)
}

/// Completes a fleet name.
pub fn fleets() -> ArgValueCompleter {
    ArgValueCompleter::new(fleet_names)
}

/// Completes a preview name.
pub fn previews() -> ArgValueCompleter {
    ArgValueCompleter::new(preview_names)
}

/// Completes a rollout name.
pub fn rollouts() -> ArgValueCompleter {
    ArgValueCompleter::new(rollout_names)
}

/// Completes a namespace.
pub fn namespaces() -> ArgValueCompleter {
    ArgValueCompleter::new(namespace_names)
}

/// Completes a kubeconfig context.
pub fn contexts() -> ArgValueCompleter {
    ArgValueCompleter::new(context_names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_connection_flags_typed_so_far() {
        let words: Vec<String> = [
            "--",
            "kubectl-celld",
            "status",
            "-n",
            "apps",
            "--context=prod",
            "--kubeconfig",
            "/k",
            "w",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let g = connect_args_from(&words);
        assert_eq!(g.namespace.as_deref(), Some("apps"));
        assert_eq!(g.context.as_deref(), Some("prod"));
        assert_eq!(g.kubeconfig, Some(PathBuf::from("/k")));
        let names = vec!["web".to_string(), "worker".into(), "api".into()];
        let got: Vec<String> = matching(names, OsStr::new("w"))
            .iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect();
        assert_eq!(got, ["web", "worker"]);
    }
}
