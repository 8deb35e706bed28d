//! Reading one pod's log, line by line, each line tagged with its pod.

use futures::{AsyncBufReadExt, TryStreamExt};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::api::LogParams;
use kube::{Api, Client};
use tokio::sync::mpsc;

/// The container whose log is read when the pod has several and none is named.
pub const DEFAULT_CONTAINER: &str = "celld";

/// A log line of a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The pod, as the prefix names it: `web-0`, or `apps/web-0` across namespaces.
    pub pod: String,
    /// The line, without its newline.
    pub text: String,
}

/// How to read the logs (the flags).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep reading.
    pub follow: bool,
    /// Lines from the end; None for all.
    pub tail: Option<i64>,
    /// Only lines newer than this many seconds.
    pub since_seconds: Option<i64>,
    /// Only lines from this time on (for resuming a stream).
    pub since_time: Option<Timestamp>,
    /// Timestamp each line.
    pub timestamps: bool,
    /// The container asked for.
    pub container: Option<String>,
    /// Logs of the previous container instance.
    pub previous: bool,
    /// Name pods with their namespace (`apps/web-0`), when they come from several.
    pub namespace_prefix: bool,
}

/// The line as printed: `[pod] text`.
pub fn prefixed(line: &Line) -> String {
    format!("[{}] {}", line.pod, line.text)
}

/// The container to read: the one asked for; else none (the pod's only container); else
/// `celld` if the pod has it; else the first.
pub fn container(pod: &Pod, asked: Option<&str>) -> Option<String> {
    if let Some(c) = asked {
        return Some(c.to_string());
    }
    let containers = &pod.spec.as_ref()?.containers;
    if containers.len() <= 1 {
        return None;
    }
    containers
        .iter()
        .find(|c| c.name == DEFAULT_CONTAINER)
        .or_else(|| containers.first())
        .map(|c| c.name.clone())
}

/// The request parameters for `pod`.
pub fn params(pod: &Pod, o: &Options) -> LogParams {
    LogParams {
        container: container(pod, o.container.as_deref()),
        follow: o.follow,
        tail_lines: o.tail,
        since_seconds: if o.since_time.is_some() {
            None
        } else {
            o.since_seconds
        },
        since_time: o.since_time,
        timestamps: o.timestamps,
        previous: o.previous,
        ..LogParams::default()
    }
}

/// The name lines of `pod` are prefixed with.
pub fn shown_name(pod: &Pod, o: &Options) -> String {
    let name = pod.metadata.name.clone().unwrap_or_default();
    match (&pod.metadata.namespace, o.namespace_prefix) {
        (Some(ns), true) => format!("{ns}/{name}"),
        _ => name,
    }
}

/// Sends every line of `pod`'s log to `tx` until the log ends (or, following, the pod goes).
pub async fn pump(
    client: &Client,
    pod: &Pod,
    options: &Options,
    tx: &mpsc::Sender<Line>,
) -> Result<(), kube::Error> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let pods: Api<Pod> = match &pod.metadata.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::default_namespaced(client.clone()),
    };
    let shown = shown_name(pod, options);
    let reader = pods.log_stream(&name, &params(pod, options)).await?;
    let mut lines = reader.lines();
    while let Some(text) = lines.try_next().await.map_err(kube::Error::ReadEvents)? {
        let line = Line {
            pod: shown.clone(),
            text,
        };
        if tx.send(line).await.is_err() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    fn pod(containers: &[&str]) -> Pod {
        Pod {
            spec: Some(PodSpec {
                containers: containers
                    .iter()
                    .map(|n| Container {
                        name: (*n).into(),
                        ..Container::default()
                    })
                    .collect(),
                ..PodSpec::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn picks_the_container() {
        assert_eq!(container(&pod(&["x"]), None), None);
        assert_eq!(
            container(&pod(&["sidecar", "celld"]), None).as_deref(),
            Some("celld")
        );
        assert_eq!(container(&pod(&["a", "b"]), None).as_deref(), Some("a"));
        assert_eq!(container(&pod(&["a"]), Some("b")).as_deref(), Some("b"));
    }

    #[test]
    fn prefixes_with_the_pod() {
        let l = Line {
            pod: "web-0".into(),
            text: "ready".into(),
        };
        assert_eq!(prefixed(&l), "[web-0] ready");
        let mut p = pod(&["celld"]);
        p.metadata.name = Some("web-0".into());
        p.metadata.namespace = Some("apps".into());
        assert_eq!(shown_name(&p, &Options::default()), "web-0");
        let across = Options {
            namespace_prefix: true,
            ..Options::default()
        };
        assert_eq!(shown_name(&p, &across), "apps/web-0");
    }

    #[test]
    fn resuming_uses_since_time_only() {
        let o = Options {
            since_seconds: Some(60),
            since_time: Some(Timestamp::from_second(1_000).unwrap()),
            ..Options::default()
        };
        let p = params(&pod(&["x"]), &o);
        assert_eq!(p.since_seconds, None);
        assert!(p.since_time.is_some());
    }
}
