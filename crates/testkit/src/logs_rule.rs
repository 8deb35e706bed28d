//! Setting what `kubectl logs` shows for a pod: a kwok `Logs` rule pointing at a log file.
//!
//! kwok reads log files like a kubelet does, so the file must be in the CRI log format
//! (`<RFC 3339 time> stdout F <line>`); [`write_cri_log`] writes one.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::api::LogParams;
use kube::{Api, Client};
use serde_json::json;

use crate::error::{Error, Result};
use crate::kwok_api;
use crate::wait::{Check, DEFAULT_TIMEOUT, wait_until};

/// Writes `lines` to `path` as a CRI log file (each line on stdout, stamped with the current
/// time), replacing the file.
pub fn write_cri_log<S: AsRef<str>>(path: &Path, lines: &[S]) -> Result<()> {
    std::fs::write(path, cri_lines(lines)).map_err(|e| Error::io("writing a CRI log file", path, e))
}

/// Appends `lines` to the CRI log file at `path` (a client following the logs sees them).
pub fn append_cri_log<S: AsRef<str>>(path: &Path, lines: &[S]) -> Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io("opening a CRI log file", path, e))?;
    file.write_all(cri_lines(lines).as_bytes())
        .map_err(|e| Error::io("appending to a CRI log file", path, e))
}

fn cri_lines<S: AsRef<str>>(lines: &[S]) -> String {
    let now = Timestamp::now();
    lines
        .iter()
        .map(|line| format!("{now} stdout F {}\n", line.as_ref()))
        .collect()
}

/// The messages of a CRI log file's text: what `kubectl logs` prints for it.
pub fn cri_log_messages(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut fields = line.splitn(4, ' ');
        let (_time, _stream, tag, message) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next().unwrap_or(""),
        );
        out.push_str(message);
        if tag != Some("P") {
            out.push('\n');
        }
    }
    out
}

/// A kwok `Logs` rule for one pod: which file its containers' logs come from.
#[derive(Debug, Clone)]
pub struct LogsRule {
    pod: String,
    container: Option<String>,
    logs_file: PathBuf,
    previous_logs_file: Option<PathBuf>,
}

impl LogsRule {
    /// A rule showing the CRI log file `logs_file` (absolute path) for every container of `pod`.
    pub fn for_pod(pod: impl Into<String>, logs_file: impl Into<PathBuf>) -> Self {
        LogsRule {
            pod: pod.into(),
            container: None,
            logs_file: logs_file.into(),
            previous_logs_file: None,
        }
    }

    /// Applies only to `container`.
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }

    /// What `kubectl logs --previous` shows.
    pub fn previous_logs_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.previous_logs_file = Some(file.into());
        self
    }

    /// Creates or replaces the rule in `namespace` and waits (up to 30 s) until the pod's logs,
    /// read through the API, are the file's messages. The pod must be Running.
    pub async fn apply(&self, client: &Client, namespace: &str) -> Result<()> {
        let mut target = json!({ "logsFile": self.logs_file.display().to_string() });
        if let Some(previous) = &self.previous_logs_file {
            target["previousLogsFile"] = json!(previous.display().to_string());
        }
        if let Some(container) = &self.container {
            target["containers"] = json!([container]);
        }
        let object = json!({
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "Logs",
            "metadata": { "name": self.pod, "namespace": namespace },
            "spec": { "logs": [target] },
        });
        let api = kwok_api::api(client, namespace, "Logs", "logs");
        kwok_api::apply(&api, &self.pod, object).await?;

        let text = std::fs::read_to_string(&self.logs_file)
            .map_err(|e| Error::io("reading the pod's log file", &self.logs_file, e))?;
        let expected = cri_log_messages(&text);
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let params = LogParams {
            container: self.container.clone(),
            ..LogParams::default()
        };
        let what = format!(
            "kwok to serve {} as the logs of pod {namespace}/{}",
            self.logs_file.display(),
            self.pod
        );
        wait_until(what, DEFAULT_TIMEOUT, || async {
            match pods.logs(&self.pod, &params).await {
                Ok(logs) if logs == expected => Check::Done(()),
                Ok(logs) => Check::Pending(format!("logs were {logs:?}")),
                Err(e) => Check::Pending(format!("reading logs failed: {e}")),
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cri_round_trip() {
        let text = cri_lines(&["hello", "two words"]);
        assert!(text.lines().all(|l| l.contains(" stdout F ")), "{text}");
        assert_eq!(cri_log_messages(&text), "hello\ntwo words\n");
        assert_eq!(
            cri_log_messages(
                "2024-01-01T00:00:00Z stdout P par\n2024-01-01T00:00:00Z stdout F tial\n"
            ),
            "partial\n"
        );
    }
}
