//! The pieces the error messages are made of: where (namespace, server, file), and what to
//! try next.

use super::kube_error;
use std::path::PathBuf;

pub(super) fn path_note(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| format!(" '{}'", p.display()))
        .unwrap_or_default()
}

pub(super) fn release_manifest() -> String {
    format!(
        "https://github.com/anthaathi/celld-operator/releases/download/v{}/install-operator.yaml",
        env!("CARGO_PKG_VERSION")
    )
}

pub(super) fn server_note(server: &Option<String>) -> String {
    server.as_ref().map(|s| format!(" {s}")).unwrap_or_default()
}

pub(super) fn unreachable(server: &Option<String>, refused: bool, detail: &str) -> String {
    let server = server
        .as_deref()
        .map(kube_error::host_port)
        .unwrap_or_else(|| "(kubeconfig server)".to_string());
    if refused {
        format!(
            "The connection to the server {server} was refused - did you specify the right host or port? (check the context with: kubectl config view --minify)"
        )
    } else {
        format!(
            "Unable to connect to the server {server}: {detail} (check the context with: kubectl config view --minify)"
        )
    }
}

pub(super) fn hint_note(source: &kube::Error, namespace: &Option<String>) -> String {
    kube_error::hint(source, namespace.as_deref())
        .map(|h| format!("; {h}"))
        .unwrap_or_default()
}

pub(super) fn ns_note(namespace: &Option<String>) -> String {
    namespace
        .as_ref()
        .map(|n| format!(" in namespace '{n}'"))
        .unwrap_or_else(|| " cluster-wide".to_string())
}

pub(super) fn place(namespace: &Option<String>) -> String {
    match namespace {
        Some(ns) => format!("in namespace '{ns}'"),
        None => "in any namespace".to_string(),
    }
}

pub(super) fn ns_flag(namespace: &Option<String>) -> String {
    namespace
        .as_ref()
        .map(|n| format!(" -n {n}"))
        .unwrap_or_else(|| " -A".to_string())
}

pub(super) fn fleet_not_found(
    name: &str,
    namespace: &str,
    near: &[String],
    elsewhere: &[String],
) -> String {
    let mut msg = format!("CelldFleet '{name}' does not exist in namespace '{namespace}'");
    if !elsewhere.is_empty() {
        msg.push_str(&format!(
            "; a fleet of that name exists in namespace {}: add -n {}",
            elsewhere
                .iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", "),
            elsewhere[0]
        ));
    }
    if near.is_empty() {
        msg.push_str(&format!(
            "; list the fleets with: kubectl celld status -n {namespace} (or -A), or create one with: kubectl celld init {name}"
        ));
    } else {
        msg.push_str(&format!("; did you mean {}?", near.join(", ")));
    }
    msg
}
