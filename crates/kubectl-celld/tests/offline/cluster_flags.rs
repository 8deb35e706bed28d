//! kubectl's connection flags override the kubeconfig: `--server`, `--token`, `--as`,
//! `--as-group` reach the server as kubectl sends them; `--request-timeout` gives up on a
//! server that never answers; conflicting TLS flags are refused.

use clap::Parser;
use kubectl_celld::cli::Cli;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A kubeconfig whose server is a closed port and whose user has another token.
fn kubeconfig(dir: &Path) -> String {
    let path = dir.join("config");
    std::fs::write(
        &path,
        "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: 'http://127.0.0.1:1'}
users:
- name: u
  user: {token: from-kubeconfig}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: apps}
current-context: ctx
",
    )
    .unwrap();
    path.display().to_string()
}

/// A server that records each request's head and answers 403 (or nothing, when `silent`).
async fn recording_server(silent: bool) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let mut head = Vec::new();
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                log.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).to_lowercase());
                if silent {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    return;
                }
                let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden","reason":"Forbidden","code":403}"#;
                let reply = format!(
                    "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(reply.as_bytes()).await;
                let _ = conn.shutdown().await;
            });
        }
    });
    (format!("http://{addr}"), seen)
}

async fn run(args: &[&str]) -> Result<u8, String> {
    let dir = tempfile::tempdir().unwrap();
    let mut argv = vec![
        "kubectl-celld".to_string(),
        "--kubeconfig".into(),
        kubeconfig(dir.path()),
    ];
    argv.extend(args.iter().map(|a| a.to_string()));
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    let run = kubectl_celld::run(cli);
    // A guard against a hang, not a measurement.
    match tokio::time::timeout(Duration::from_secs(60), run).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err("did not finish within 60s".into()),
    }
}

#[tokio::test]
async fn server_token_and_impersonation_flags_reach_the_server() {
    let (server, seen) = recording_server(false).await;
    let e = run(&[
        "status",
        "web",
        "--server",
        &server,
        "--token",
        "from-flag",
        "--as",
        "alice",
        "--as-group",
        "devs",
        "--as-group",
        "ops",
    ])
    .await
    .unwrap_err();
    assert!(e.starts_with("forbidden: you may not get"), "{e}");
    let seen = seen.lock().unwrap();
    let head = seen.first().expect("the request went to --server");
    assert!(head.contains("authorization: bearer from-flag"), "{head}");
    assert!(!head.contains("from-kubeconfig"), "{head}");
    assert!(head.contains("impersonate-user: alice"), "{head}");
    assert!(head.contains("impersonate-group: devs"), "{head}");
    assert!(head.contains("impersonate-group: ops"), "{head}");
}

#[tokio::test]
async fn request_timeout_gives_up_on_a_silent_server() {
    let (server, seen) = recording_server(true).await;
    let e = run(&[
        "status",
        "web",
        "--server",
        &server,
        "--request-timeout",
        "1s",
    ])
    .await
    .unwrap_err();
    assert!(!seen.lock().unwrap().is_empty());
    assert!(
        e.contains("Unable to connect to the server") || e.contains("timed out"),
        "{e}"
    );
}

#[tokio::test]
async fn conflicting_or_missing_tls_and_impersonation_flags_are_refused() {
    let e = run(&[
        "status",
        "--insecure-skip-tls-verify",
        "--certificate-authority",
        "/etc/hostname",
    ])
    .await
    .unwrap_err();
    assert!(e.contains("with the insecure flag is not allowed"), "{e}");
    let e = run(&["status", "--certificate-authority", "/nonexistent/ca.crt"])
        .await
        .unwrap_err();
    assert!(
        e.contains("--certificate-authority") && e.contains("/nonexistent/ca.crt"),
        "{e}"
    );
    let e = run(&["status", "--as-group", "devs"]).await.unwrap_err();
    assert!(e.contains("--as-group needs --as USER"), "{e}");
    let e = run(&["status", "--server", "http://[::1"])
        .await
        .unwrap_err();
    assert!(e.contains("is not a URL"), "{e}");
}

/// A kubeconfig `proxy-url` is used: the request goes to the proxy, naming the real server.
#[tokio::test]
async fn kubeconfig_proxy_url_is_used() {
    let (proxy, seen) = recording_server(false).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: 'http://api.cluster.invalid:6443', proxy-url: '{proxy}'}}
users:
- name: u
  user: {{token: t}}
contexts:
- name: ctx
  context: {{cluster: c, user: u, namespace: apps}}
current-context: ctx
"
        ),
    )
    .unwrap();
    let argv = [
        "kubectl-celld",
        "--kubeconfig",
        path.to_str().unwrap(),
        "status",
        "web",
    ];
    let cli = Cli::try_parse_from(argv).unwrap();
    let result = tokio::time::timeout(Duration::from_secs(60), kubectl_celld::run(cli)).await;
    assert!(matches!(result, Ok(Err(_))), "the proxy answers 403");
    let seen = seen.lock().unwrap();
    let head = seen.first().expect("the request went to the proxy");
    assert!(head.contains("api.cluster.invalid:6443"), "{head}");
}
