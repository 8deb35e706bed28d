//! What a user sees when the kubeconfig's server cannot be reached, is not a Kubernetes API
//! server, lacks the celld CRDs, or has an operator too old for previews: kubectl's wording
//! with the server's address, the install command of this release, never a client debug dump.

use clap::Parser;
use kubectl_celld::cli::Cli;
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn kubeconfig(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join("config");
    let text = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: '{server}'}}
users:
- name: u
  user: {{token: t}}
contexts:
- name: ctx
  context: {{cluster: c, user: u, namespace: apps}}
current-context: ctx
"
    );
    std::fs::write(&path, text).unwrap();
    path
}

async fn error_of(server: &str, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), server);
    let mut argv = vec![
        "kubectl-celld".to_string(),
        "--kubeconfig".to_string(),
        config.display().to_string(),
    ];
    argv.extend(args.iter().map(|a| a.to_string()));
    let cli = Cli::try_parse_from(argv).unwrap();
    match kubectl_celld::run(cli).await {
        Ok(code) => panic!("{args:?} against {server} should fail, exited {code}"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn refused_connection_names_the_server_like_kubectl() {
    for args in [
        &["status", "web"][..],
        &["status"][..],
        &["top", "-A"][..],
        &["logs", "web"][..],
        &[
            "init",
            "web",
            "--bucket",
            "s3://bkt/web",
            "--store",
            "s",
            "--apply",
        ][..],
    ] {
        let e = error_of("http://127.0.0.1:1", args).await;
        assert_eq!(
            e,
            "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port? (check the context with: kubectl config view --minify)",
            "{args:?}"
        );
    }
}

/// What `/version` answers on a Kubernetes API server.
const VERSION_INFO: &str = r#"{"major":"1","minor":"36","gitVersion":"v1.36.3","gitCommit":"0","gitTreeState":"clean","buildDate":"2026-01-01T00:00:00Z","goVersion":"go1.25","compiler":"gc","platform":"linux/amd64"}"#;

/// A web server that answers every request with a plain-text 404, as a non-Kubernetes server
/// (or a wrong port of a web server) does; with `kubernetes`, `/version` answers as an API
/// server's does, so the server is one without the celld CRDs.
async fn not_found_server(kubernetes: bool) -> String {
    server(kubernetes, false).await
}

/// An empty list of fleets, as an API server with the CelldFleet CRD answers.
const NO_FLEETS: &str = r#"{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadataList","metadata":{"resourceVersion":"1"},"items":[]}"#;

/// [`not_found_server`]; with `fleets`, a list of CelldFleets answers (empty), so the server
/// has the CelldFleet CRD but no other celld CRD: an operator older than previews.
async fn server(kubernetes: bool, fleets: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let version = seen.starts_with(b"GET /version ");
                let fleet_list =
                    seen.starts_with(b"GET /apis/platform.celld.dev/v1alpha1/celldfleets?");
                let (status, kind, body) = if kubernetes && version {
                    ("200 OK", "application/json", VERSION_INFO)
                } else if fleets && fleet_list {
                    ("200 OK", "application/json", NO_FLEETS)
                } else {
                    (
                        "404 Not Found",
                        "text/plain; charset=utf-8",
                        "404 page not found\n",
                    )
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(reply.as_bytes()).await;
                let _ = conn.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_server_that_is_not_kubernetes_is_not_told_to_install_crds() {
    let server = not_found_server(false).await;
    let e = error_of(&server, &["status", "web"]).await;
    let e = e.replace(&server, "http://127.0.0.1:PORT");
    insta::assert_snapshot!(e, @"the server http://127.0.0.1:PORT is not a Kubernetes API server: it answered 404 to celldfleets.platform.celld.dev and to /version; check the cluster's server URL (kubectl config view --minify) or pick another context with --context");
    let e = error_of(&server, &["status"]).await;
    assert!(e.contains("is not a Kubernetes API server"), "{e}");
    assert!(!e.contains("CRDs"), "{e}");
}

/// A Kubernetes API server without the CRDs: the hint installs the released manifest of this
/// plugin's version, and names the source-checkout path only as the alternative.
#[tokio::test]
async fn missing_crds_point_at_the_release_manifest() {
    let server = not_found_server(true).await;
    for args in [
        &["status", "web"][..],
        &["status"][..],
        &["top"][..],
        &["logs", "web"][..],
    ] {
        let e = error_of(&server, args).await;
        let e = e.replace(env!("CARGO_PKG_VERSION"), "VERSION");
        assert!(
            e.starts_with("the celld CRDs are not installed in this cluster"),
            "{args:?}: {e}"
        );
        assert!(
            !e.contains("is not a Kubernetes API server"),
            "{args:?}: {e}"
        );
    }
    let e = error_of(&server, &["status", "web"]).await;
    let e = e.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    insta::assert_snapshot!(e, @"the celld CRDs are not installed in this cluster (the API server does not know celldfleets.platform.celld.dev): install the operator and its CRDs with: kubectl apply --server-side -f https://github.com/anthaathi/celld-operator/releases/download/vVERSION/install-operator.yaml (from a source checkout: kubectl apply --server-side -f config/crd/bases/), or check --context");
}

/// An operator older than previews (the API server knows CelldFleets, not CelldPreviews): the
/// preview commands say to upgrade it; without any celld CRD they say to install them.
#[tokio::test]
async fn preview_commands_tell_an_operator_too_old_for_previews_from_missing_crds() {
    let old = server(true, true).await;
    let e = error_of(&old, &["preview", "list"]).await;
    let e = e.replace(env!("CARGO_PKG_VERSION"), "VERSION");
    insta::assert_snapshot!(e, @"this cluster's celld operator is too old for previews: the API server knows celldfleets.platform.celld.dev but not celldpreviews.platform.celld.dev; upgrade the operator and its CRDs with: kubectl apply --server-side -f https://github.com/anthaathi/celld-operator/releases/download/vVERSION/install-operator.yaml, or check --context");
    for args in [
        &["preview", "status", "pr-1"][..],
        &["preview", "delete", "pr-1"][..],
    ] {
        let other = error_of(&old, args).await;
        assert_eq!(
            other.replace(env!("CARGO_PKG_VERSION"), "VERSION"),
            e,
            "{args:?}"
        );
    }
    let none = not_found_server(true).await;
    let e = error_of(&none, &["preview", "list", "-A"]).await;
    assert!(
        e.starts_with(
            "the celld CRDs are not installed in this cluster (the API server does not know celldpreviews.platform.celld.dev)"
        ),
        "{e}"
    );
}
