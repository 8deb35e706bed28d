//! Making a new version live at once: from inside the deploy pod (which the fleet's
//! NetworkPolicy admits), `POST /reload` on each ready node's internal port, and a report of
//! what each node did.

use super::job::CONTAINER;
use crate::cluster::exec::{self, Sink, Spec};
use crate::cluster::fleet_context::Node;
use celld_api::contract::INTERNAL_PORT;
use celld_api::contract::node_api::{RELOAD_PATH, Reload, quoted};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use std::fmt;

/// Seconds curl may take per node.
pub const MAX_TIME: u32 = 10;

/// What a node answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It switched to the new version.
    Adopted,
    /// It already ran the version the pointer names.
    Unchanged,
    /// HTTP 422: the new version failed to load; the node keeps the old one.
    Failed(String),
    /// HTTP 503: the node found no deployment pointer.
    NoPointer(String),
    /// Any other HTTP answer.
    Unexpected(u16, String),
    /// curl could not reach the node.
    Unreachable(String),
}

impl Outcome {
    /// Whether the node runs the new version now.
    pub fn ok(&self) -> bool {
        matches!(self, Self::Adopted | Self::Unchanged)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Adopted => write!(f, "adopted the new version"),
            Self::Unchanged => write!(f, "unchanged (already on this version)"),
            Self::Failed(m) => write!(
                f,
                "FAILED to load the new version (HTTP 422): {m}; it keeps serving the previous version"
            ),
            Self::NoPointer(m) => write!(f, "no deployment pointer found (HTTP 503): {m}"),
            Self::Unexpected(code, m) => write!(f, "unexpected answer HTTP {code}: {m}"),
            Self::Unreachable(m) => write!(
                f,
                "unreachable: {m} (does the fleet's NetworkPolicy admit deploy pods to port {INTERNAL_PORT}?)"
            ),
        }
    }
}

/// Nodes reloaded at the same time by the script.
pub const PARALLEL: usize = 16;

/// The script run in the deploy pod: `POST /reload` to every host given as an argument, at
/// most [`PARALLEL`] at a time, with results in `.reload/` (relative to the working
/// directory), then one block per host, in argument order:
///
/// ```text
/// @@node 1 rc=0 http=200
/// {"ok":true,"outcome":"adopted"}
/// @@stderr
/// @@end
/// ```
pub fn script() -> String {
    format!(
        r#"rm -rf .reload && mkdir -p .reload || exit 90
i=0
for host in "$@"; do
  i=$((i+1))
  (
    curl -sS -X POST --connect-timeout 5 --max-time {MAX_TIME} -o ".reload/$i.body" -w '%{{http_code}}' "http://$host:{INTERNAL_PORT}{RELOAD_PATH}" >".reload/$i.code" 2>".reload/$i.err"
    echo "$?" >".reload/$i.rc"
  ) &
  [ $((i % {PARALLEL})) -eq 0 ] && wait
done
wait
i=0
for host in "$@"; do
  i=$((i+1))
  printf '@@node %s rc=%s http=%s\n' "$i" "$(cat ".reload/$i.rc" 2>/dev/null)" "$(cat ".reload/$i.code" 2>/dev/null)"
  cat ".reload/$i.body" 2>/dev/null
  echo
  echo "@@stderr"
  cat ".reload/$i.err" 2>/dev/null
  echo "@@end"
done
"#
    )
}

/// How a pod IP is written in a URL (IPv6 in brackets).
pub fn host(ip: &str) -> String {
    if ip.contains(':') {
        format!("[{ip}]")
    } else {
        ip.to_string()
    }
}

/// The exec command that reloads `hosts`.
pub fn command(hosts: &[String]) -> Vec<String> {
    let mut cmd = vec![
        "sh".to_string(),
        "-c".to_string(),
        script(),
        "celld-reload".to_string(),
    ];
    cmd.extend(hosts.iter().cloned());
    cmd
}

/// One node's result: curl's exit code, the HTTP code it wrote, the body and curl's stderr.
pub fn parse(rc: i32, http: &str, body: &str, stderr: &str) -> Outcome {
    if rc != 0 {
        let why = stderr.trim();
        return Outcome::Unreachable(if why.is_empty() {
            format!("curl exit code {rc}")
        } else {
            why.to_string()
        });
    }
    let Ok(http) = http.trim().parse::<u16>() else {
        return Outcome::Unexpected(0, quoted(body));
    };
    match Reload::read(http, body.as_bytes()) {
        Reload::Adopted => Outcome::Adopted,
        Reload::Unchanged => Outcome::Unchanged,
        Reload::Refused(why) => Outcome::Failed(why),
        Reload::NoPointer(why) => Outcome::NoPointer(why),
        Reload::Unexpected(code, what) => Outcome::Unexpected(code, what),
    }
}

/// Splits the script's output into one result per host (1-based index order). A host without
/// a block gets an Unreachable outcome saying the script did not report it.
pub fn parse_blocks(stdout: &str, count: usize) -> Vec<Outcome> {
    #[derive(Default)]
    struct Block {
        rc: Option<i32>,
        http: String,
        body: String,
        stderr: String,
    }
    let mut blocks: Vec<Block> = (0..count).map(|_| Block::default()).collect();
    let mut current: Option<usize> = None;
    let mut in_stderr = false;
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("@@node ") {
            let mut parts = rest.split(' ');
            let index = parts.next().and_then(|i| i.parse::<usize>().ok());
            current = index.filter(|i| (1..=count).contains(i)).map(|i| i - 1);
            in_stderr = false;
            if let Some(b) = current.and_then(|i| blocks.get_mut(i)) {
                for p in parts {
                    if let Some(v) = p.strip_prefix("rc=") {
                        b.rc = v.parse().ok();
                    } else if let Some(v) = p.strip_prefix("http=") {
                        b.http = v.to_string();
                    }
                }
            }
        } else if line == "@@stderr" {
            in_stderr = true;
        } else if line == "@@end" {
            current = None;
        } else if let Some(b) = current.and_then(|i| blocks.get_mut(i)) {
            let target = if in_stderr {
                &mut b.stderr
            } else {
                &mut b.body
            };
            target.push_str(line);
            target.push('\n');
        }
    }
    blocks
        .into_iter()
        .map(|b| match b.rc {
            Some(rc) => parse(rc, &b.http, &b.body, &b.stderr),
            None => Outcome::Unreachable("the reload script reported nothing for this node".into()),
        })
        .collect()
}

/// Reloads every ready node from `deployer` (one exec for all) and returns each node's
/// outcome, in node order. Nodes that are not ready are left out (they read the pointer when
/// they start).
pub async fn reload(pods: &Api<Pod>, deployer: &str, nodes: &[Node]) -> Vec<(Node, Outcome)> {
    let targets: Vec<(Node, String)> = nodes
        .iter()
        .filter(|n| n.ready)
        .filter_map(|n| n.ip.as_deref().map(|ip| (n.clone(), host(ip))))
        .collect();
    if targets.is_empty() {
        return Vec::new();
    }
    let hosts: Vec<String> = targets.iter().map(|(_, h)| h.clone()).collect();
    let result = exec::run(
        pods,
        deployer,
        Spec {
            command: command(&hosts),
            container: CONTAINER.into(),
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            stdin: None,
        },
    )
    .await;
    let outcomes = match result {
        Ok(done) if done.code == 0 => {
            parse_blocks(&String::from_utf8_lossy(&done.stdout), hosts.len())
        }
        Ok(done) => {
            let why = format!(
                "the reload script failed (exit code {}): {}",
                done.code,
                String::from_utf8_lossy(&done.stderr).trim()
            );
            vec![Outcome::Unreachable(why); hosts.len()]
        }
        Err(e) => vec![Outcome::Unreachable(e.to_string()); hosts.len()],
    };
    targets.into_iter().map(|(n, _)| n).zip(outcomes).collect()
}

/// The report printed after the reloads.
pub fn report(nodes: &[Node], results: &[(Node, Outcome)]) -> String {
    let mut out = String::new();
    if nodes.is_empty() {
        out.push_str(
            "No node pods found for this fleet: nothing to reload (nodes read the new version when they start)\n",
        );
        return out;
    }
    let ready = results.len();
    out.push_str(&format!(
        "Reloading {ready} ready node{} (POST {RELOAD_PATH} on port {INTERNAL_PORT}):\n",
        if ready == 1 { "" } else { "s" }
    ));
    for (n, outcome) in results {
        out.push_str(&format!(
            "  {} ({}): {outcome}\n",
            n.name,
            n.ip.as_deref().unwrap_or("-")
        ));
    }
    for n in nodes.iter().filter(|n| !n.ready || n.ip.is_none()) {
        out.push_str(&format!(
            "  {}: not ready, skipped (it reads the new version within 30s of becoming ready)\n",
            n.name
        ));
    }
    let adopted = results
        .iter()
        .filter(|(_, o)| *o == Outcome::Adopted)
        .count();
    let unchanged = results
        .iter()
        .filter(|(_, o)| *o == Outcome::Unchanged)
        .count();
    let failed = results.len() - adopted - unchanged;
    out.push_str(&format!(
        "Reload: {adopted} adopted, {unchanged} unchanged, {failed} failed"
    ));
    if failed > 0 {
        out.push_str(" (failed nodes keep polling the pointer every 30s)");
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_passes_hosts_as_arguments() {
        let cmd = command(&["10.244.0.7".into(), host("fd00::5")]);
        assert_eq!(cmd[..2], ["sh", "-c"]);
        assert_eq!(cmd[3..], ["celld-reload", "10.244.0.7", "[fd00::5]"]);
        insta::assert_snapshot!(cmd[2]);
    }

    #[test]
    fn parses_celld_answers() {
        assert_eq!(
            parse(0, "200", "{\"ok\":true,\"outcome\":\"adopted\"}\n", ""),
            Outcome::Adopted
        );
        assert_eq!(
            parse(0, "200", "{\"ok\":true,\"outcome\":\"unchanged\"}", ""),
            Outcome::Unchanged
        );
        assert_eq!(
            parse(0, "422", "{\"ok\":false,\"error\":\"build failed: x\"}", ""),
            Outcome::Failed("build failed: x".into())
        );
        assert_eq!(
            parse(0, "503", "no pointer", ""),
            Outcome::NoPointer("no pointer".into())
        );
        assert_eq!(
            parse(7, "000", "", "curl: (7) Failed to connect\n"),
            Outcome::Unreachable("curl: (7) Failed to connect".into())
        );
        assert_eq!(
            parse(0, "404", "<html>", ""),
            Outcome::Unexpected(404, "<html>".into())
        );
    }

    /// Runs the real script with sh and a fake curl that answers per host.
    #[test]
    fn script_runs_with_sh() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let curl = bin.join("curl");
        std::fs::write(
            &curl,
            r#"#!/bin/sh
out= url=
while [ $# -gt 0 ]; do
  case "$1" in -o) out=$2; shift ;; -w|-X|--max-time|--connect-timeout) shift ;; http*) url=$1 ;; esac
  shift
done
case "$url" in
  *10.0.0.1*) printf '{"ok":true,"outcome":"adopted"}' >"$out"; printf 200 ;;
  *10.0.0.2*) printf '{"ok":false,"error":"bad module"}' >"$out"; printf 422 ;;
  *) echo "curl: (7) Failed to connect" >&2; printf 000; exit 7 ;;
esac
"#,
        )
        .unwrap();
        std::fs::set_permissions(&curl, std::fs::Permissions::from_mode(0o755)).unwrap();
        let hosts = vec!["10.0.0.1".to_string(), "10.0.0.2".into(), "10.0.0.3".into()];
        let cmd = command(&hosts);
        let out = std::process::Command::new(&cmd[0])
            .args(&cmd[1..])
            .current_dir(dir.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            parse_blocks(&String::from_utf8_lossy(&out.stdout), 3),
            vec![
                Outcome::Adopted,
                Outcome::Failed("bad module".into()),
                Outcome::Unreachable("curl: (7) Failed to connect".into()),
            ]
        );
    }

    #[test]
    fn parses_script_blocks() {
        let out = "@@node 1 rc=0 http=200\n{\"ok\":true,\"outcome\":\"adopted\"}\n@@stderr\n@@end\n\
                   @@node 2 rc=28 http=000\n\n@@stderr\ncurl: (28) Connection timed out\n@@end\n";
        assert_eq!(
            parse_blocks(out, 3),
            vec![
                Outcome::Adopted,
                Outcome::Unreachable("curl: (28) Connection timed out".into()),
                Outcome::Unreachable("the reload script reported nothing for this node".into()),
            ]
        );
    }

    #[test]
    fn report_lists_every_node() {
        let n = |name: &str, ip: Option<&str>, ready| Node {
            name: name.into(),
            ip: ip.map(Into::into),
            ready,
        };
        let nodes = vec![
            n("web-0", Some("10.0.0.1"), true),
            n("web-1", Some("10.0.0.2"), true),
            n("web-2", Some("10.0.0.3"), true),
            n("web-3", None, false),
        ];
        let results = vec![
            (nodes[0].clone(), Outcome::Adopted),
            (nodes[1].clone(), Outcome::Unchanged),
            (nodes[2].clone(), Outcome::Failed("syntax error".into())),
        ];
        insta::assert_snapshot!(report(&nodes, &results));
        assert!(report(&[], &[]).starts_with("No node pods"));
    }
}
