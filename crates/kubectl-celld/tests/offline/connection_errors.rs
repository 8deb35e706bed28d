//! What a user sees when the kubeconfig's server cannot be reached, or is not a Kubernetes API
//! server: kubectl's wording with the server's address, never a client debug dump.

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

/// A web server that answers every request with a plain-text 404, as a non-Kubernetes server
/// (or a wrong port of a web server) does.
async fn not_found_server() -> String {
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
                let body = "404 page not found\n";
                let reply = format!(
                    "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
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
    let server = not_found_server().await;
    let e = error_of(&server, &["status", "web"]).await;
    let e = e.replace(&server, "http://127.0.0.1:PORT");
    insta::assert_snapshot!(e, @"the server http://127.0.0.1:PORT is not a Kubernetes API server: it answered 404 to celldfleets.platform.celld.dev and to /version; check the cluster's server URL (kubectl config view --minify) or pick another context with --context");
    let e = error_of(&server, &["status"]).await;
    assert!(e.contains("is not a Kubernetes API server"), "{e}");
    assert!(!e.contains("CRDs"), "{e}");
}
