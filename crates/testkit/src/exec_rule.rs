//! Making `kubectl exec` into a pod run a local command: a kwok `Exec` rule for one pod.
//!
//! kwok runs the command a client sends (`kubectl exec POD -- CMD ARGS...`) as a real process on
//! this machine, with the rule's working directory and environment. kwok looks `CMD` up on its
//! own PATH; a command that is not there (a tool under test) needs a dispatch shim
//! ([`ExecRule::dispatch`]), which then finds it on the PATH the rule sets.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::AttachParams;
use kube::{Api, Client};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use crate::error::{Error, Result};
use crate::names::unique_name;
use crate::paths;
use crate::wait::{Check, wait_until};
use crate::{kwok_api, wait::DEFAULT_TIMEOUT};

/// Environment variable the kit adds to each rule so it can tell when kwok applies the rule.
pub const RULE_MARKER_ENV: &str = "CELLD_TESTENV_EXEC_RULE";

/// A kwok `Exec` rule for one pod: what a `kubectl exec` into it runs with.
#[derive(Debug, Clone)]
pub struct ExecRule {
    pod: String,
    container: Option<String>,
    work_dir: Option<PathBuf>,
    env: Vec<(String, String)>,
    dispatch: Vec<String>,
    owner_uid: Option<String>,
}

impl ExecRule {
    /// A rule for the pod `pod` (all its containers), with kwok's environment and working
    /// directory until set otherwise.
    pub fn for_pod(pod: impl Into<String>) -> Self {
        ExecRule {
            pod: pod.into(),
            container: None,
            work_dir: None,
            env: Vec::new(),
            dispatch: Vec::new(),
            owner_uid: None,
        }
    }

    /// Applies only to execs into `container` (others get no rule and fail).
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }

    /// The command's working directory (must exist).
    pub fn work_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.work_dir = Some(dir.into());
        self
    }

    /// Sets an environment variable of the command (on top of kwok's own environment).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Sets the command's `PATH` to `dirs` (in order). Include `/usr/bin:/bin` if the command
    /// runs shell tools.
    pub fn path<I, P>(self, dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let joined = dirs
            .into_iter()
            .map(|d| d.as_ref().display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        self.env("PATH", joined)
    }

    /// Command names (not paths) that are not on kwok's PATH but on the rule's [`ExecRule::path`]:
    /// the kit links each in `.testenv/pod-path/` to a shim that runs the one found on the
    /// pod's PATH. Names of system tools are refused (the shim would shadow them for every pod).
    pub fn dispatch<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.dispatch.extend(names.into_iter().map(Into::into));
        self
    }

    /// Makes the pod (whose uid is `uid`) own the rule, so the garbage collector deletes the rule
    /// with the pod.
    pub fn owned_by_pod(mut self, uid: impl Into<String>) -> Self {
        self.owner_uid = Some(uid.into());
        self
    }

    /// Creates or replaces the rule in `namespace` and waits (up to 30 s) until kwok uses it:
    /// an exec of `printenv` into the pod sees the rule's marker. The pod must be Running.
    pub async fn apply(&self, client: &Client, namespace: &str) -> Result<()> {
        for name in &self.dispatch {
            ensure_dispatch_shim(name)?;
        }
        let marker = unique_name("rule");
        let mut envs: Vec<Value> = self
            .env
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        envs.push(json!({"name": RULE_MARKER_ENV, "value": marker}));
        let mut local = json!({ "envs": envs });
        if let Some(dir) = &self.work_dir {
            local["workDir"] = json!(dir.display().to_string());
        }
        let mut target = json!({ "local": local });
        if let Some(container) = &self.container {
            target["containers"] = json!([container]);
        }
        let mut object = json!({
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "Exec",
            "metadata": { "name": self.pod, "namespace": namespace },
            "spec": { "execs": [target] },
        });
        if let Some(uid) = &self.owner_uid {
            object["metadata"]["ownerReferences"] =
                json!([{"apiVersion": "v1", "kind": "Pod", "name": self.pod, "uid": uid}]);
        }
        let api = kwok_api::api(client, namespace, "Exec", "execs");
        kwok_api::apply(&api, &self.pod, object).await?;

        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let what = format!("kwok to use the Exec rule of pod {namespace}/{}", self.pod);
        wait_until(what, DEFAULT_TIMEOUT, || async {
            match exec_stdout(
                &pods,
                &self.pod,
                self.container.as_deref(),
                &["printenv", RULE_MARKER_ENV],
            )
            .await
            {
                Ok(out) if out.trim() == marker => Check::Done(()),
                Ok(out) => Check::Pending(format!("printenv {RULE_MARKER_ENV} printed {out:?}")),
                Err(e) => Check::Pending(format!("exec failed: {e}")),
            }
        })
        .await
    }
}

/// Runs `command` in the pod through the API (no stdin) and returns its stdout.
async fn exec_stdout(
    pods: &Api<Pod>,
    pod: &str,
    container: Option<&str>,
    command: &[&str],
) -> std::result::Result<String, String> {
    let mut params = AttachParams::default()
        .stdin(false)
        .stdout(true)
        .stderr(false);
    if let Some(container) = container {
        params = params.container(container);
    }
    let mut process = pods
        .exec(pod, command.iter().copied(), &params)
        .await
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    if let Some(mut stdout) = process.stdout() {
        let read = tokio::time::timeout(Duration::from_secs(10), stdout.read_to_string(&mut out));
        read.await
            .map_err(|_| "no output within 10 s".to_owned())?
            .map_err(|e| e.to_string())?;
    }
    process.join().await.map_err(|e| e.to_string())?;
    Ok(out)
}

/// Links `.testenv/pod-path/<name>` to the dispatch shim up.sh wrote there.
fn ensure_dispatch_shim(name: &str) -> Result<()> {
    let invalid = |reason| Error::Invalid {
        what: "dispatch command name",
        value: name.to_owned(),
        reason,
    };
    if name.is_empty() || name.starts_with('.') || name.contains('/') {
        return Err(invalid("must be a plain command name"));
    }
    if on_system_path(name) {
        return Err(invalid(
            "is a command on this machine's PATH; kwok runs it directly, no shim is needed",
        ));
    }
    let dir = paths::pod_path();
    let link = dir.join(name);
    if link.symlink_metadata().is_ok() {
        return Ok(());
    }
    if !dir.join(".dispatch").exists() {
        return Err(Error::NotRunning {
            path: dir.join(".dispatch"),
        });
    }
    let tmp = dir.join(format!(".{}", unique_name(name)));
    symlink(".dispatch", &tmp).map_err(|e| Error::io("creating an exec dispatch shim", &tmp, e))?;
    std::fs::rename(&tmp, &link).map_err(|e| Error::io("creating an exec dispatch shim", &link, e))
}

/// Whether `name` is an executable on this process's PATH, outside `.testenv/pod-path`.
fn on_system_path(name: &str) -> bool {
    let shims = paths::pod_path();
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .filter(|dir| *dir != shims)
            .any(|dir| dir.join(name).is_file())
    })
}
