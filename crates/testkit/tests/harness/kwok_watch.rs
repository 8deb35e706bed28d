//! kwok goes on watching pods from where its last watch ended when the API server closes it,
//! instead of replaying every pod (resourceVersion 0): at thousands of pods the replays kept
//! kwok busy on a core and were closed again as kwok fell behind (testenv/go/kwok/patches).

use std::path::Path;
use std::time::Duration;

use celld_testkit::faults::PrivateControlPlane;
use celld_testkit::{Check, create_running_pod, fake_pod, wait_until};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use crate::TestResult;

/// The part of kwok's pod watch request that tells it apart from its other watches: every pod
/// on a node.
const POD_WATCH: &str = "fieldSelector=spec.nodeName%21%3D";

/// The resourceVersion each watch of kwok's on every pod asked for, in the order the audit log
/// shows them opened, from byte `from` of the log on (a state directory keeps its log from run
/// to run).
fn pod_watch_versions(
    audit_log: &Path,
    from: u64,
) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let bytes = std::fs::read(audit_log)?;
    let text = String::from_utf8_lossy(bytes.get(from as usize..).unwrap_or_default());
    // The length read before the restart may fall inside a line the API server was writing.
    let starts_a_line = from == 0 || bytes.get(from as usize - 1) == Some(&b'\n');
    let whole = if starts_a_line {
        &text[..]
    } else {
        text.split_once('\n').map_or("", |(_, rest)| rest)
    };
    let mut lines: Vec<&str> = whole.split_inclusive('\n').collect();
    // The last line may still be being written.
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        lines.pop();
    }
    let mut versions = Vec::new();
    for line in lines {
        let event = audit_event(line)?;
        let field = |name: &str| event.get(name).and_then(|v| v.as_str()).unwrap_or_default();
        let uri = field("requestURI");
        if field("stage") != "ResponseStarted"
            || field("verb") != "watch"
            || !field("userAgent").starts_with("kwok")
            || !uri.starts_with("/api/v1/pods?")
            || !uri.contains(POD_WATCH)
        {
            continue;
        }
        let version = uri
            .split(['?', '&'])
            .find_map(|p| p.strip_prefix("resourceVersion="))
            .unwrap_or_default();
        versions.push(version.to_owned());
    }
    Ok(versions)
}

/// One line of the audit log. The API server killed in the middle of a line leaves that line
/// unfinished, and the restarted server goes on writing after it on the same line: the event
/// read is then the last one the line starts.
fn audit_event(line: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(line).or_else(|e| match line.rfind(r#"{"kind":"Event""#) {
        Some(start) if start > 0 => serde_json::from_str(&line[start..]),
        _ => Err(e),
    })
}

#[tokio::test]
async fn kwok_watches_pods_again_from_where_it_left_off_after_the_api_server_restarts() -> TestResult
{
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testenv-kwok-watch");
    let plane = PrivateControlPlane::start_with(&dir, &[("CELLD_TESTENV_AUDIT", "1")])
        .await
        .expect("a private control plane with an audit log (needs `make testenv`)");
    let pods: Api<Pod> = Api::namespaced(plane.client().await?, "default");
    create_running_pod(&pods, &fake_pod("before")).await?;

    // The watches opened from here on are opened again.
    let audit_log = dir.join("logs/audit.log");
    let from = std::fs::metadata(&audit_log)?.len();
    plane.stop_component("kube-apiserver", "KILL").await?;
    plane.start_component("kube-apiserver").await?;
    // kwok watches again (a pod created now runs) ...
    let pods: Api<Pod> = Api::namespaced(plane.client().await?, "default");
    create_running_pod(&pods, &fake_pod("after")).await?;

    // ... from the resourceVersion its last watch reached, not from 0 (every pod again).
    let again = wait_until(
        "kwok's pod watch opened again after the API server restarted",
        Duration::from_secs(60),
        || {
            let check = match pod_watch_versions(&audit_log, from) {
                Ok(v) if !v.is_empty() => Check::Done(v),
                Ok(v) => Check::Pending(format!("kwok's pod watches so far: {v:?}")),
                Err(e) => Check::Pending(format!("reading {}: {e}", audit_log.display())),
            };
            async move { check }
        },
    )
    .await?;
    assert!(
        again.iter().all(|v| !v.is_empty() && v != "0"),
        "kwok opened its pod watch again at resourceVersion {again:?}: 0 replays every pod"
    );
    plane.stop().await?;
    Ok(())
}
