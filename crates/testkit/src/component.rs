//! Faults of a local control plane's own components, for tests of how clients ride them out:
//! killing a component and starting it again exactly as up.sh did (`testenv/scripts/restart.sh`),
//! and compacting etcd as kube-apiserver does (`testenv/scripts/etcd-compact.sh`). Run them on a
//! control plane of the test's own (its state directory), never on the shared one.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::error::{Error, Result};
use crate::paths::{STATE_DIR_ENV, workspace_root};

/// Longest a script may take (a component stops, stays down, starts and answers).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(180);

/// A component of the local control plane, as up.sh names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// etcd.
    Etcd,
    /// kube-apiserver.
    KubeApiserver,
    /// kube-controller-manager.
    KubeControllerManager,
    /// kube-scheduler.
    KubeScheduler,
    /// kwok (the fake nodes and pods).
    Kwok,
    /// The S3 server.
    S3,
    /// The OCI registry (in memory: a restart empties it).
    OciRegistry,
    /// Flux's source-controller (its artifacts stay on disk).
    SourceController,
}

impl Component {
    /// The name up.sh gives it (its pid file, its log).
    pub fn name(self) -> &'static str {
        match self {
            Component::Etcd => "etcd",
            Component::KubeApiserver => "kube-apiserver",
            Component::KubeControllerManager => "kube-controller-manager",
            Component::KubeScheduler => "kube-scheduler",
            Component::Kwok => "kwok",
            Component::S3 => "s3s-fs",
            Component::OciRegistry => "oci-registry",
            Component::SourceController => "source-controller",
        }
    }

    /// Kills the component of the control plane in `state` (SIGKILL), leaves it down for
    /// `down`, starts it again as up.sh did and returns once it answers.
    pub async fn crash_and_restart(self, state: &Path, down: Duration) -> Result<()> {
        let down = format!("{:.1}", down.as_secs_f64());
        run_script(
            "restart.sh",
            state,
            &["--signal", "KILL", "--down", &down, self.name()],
        )
        .await
        .map(drop)
    }

    /// Sends `signal` (KILL, TERM, STOP...) to the component's process group and waits until it
    /// is gone; [`Component::start`] starts it again.
    pub async fn stop(self, state: &Path, signal: &str) -> Result<()> {
        run_script(
            "restart.sh",
            state,
            &["--stop", "--signal", signal, self.name()],
        )
        .await
        .map(drop)
    }

    /// Starts the component [`Component::stop`] stopped and returns once it answers.
    pub async fn start(self, state: &Path) -> Result<()> {
        run_script("restart.sh", state, &["--start", self.name()])
            .await
            .map(drop)
    }
}

/// Compacts the etcd of the control plane in `state` up to its current revision, which it
/// returns: watches resuming from an older revision (the API server's watch caches, after etcd
/// restarts) must list again, as in a cluster whose objects were idle for a while.
pub async fn compact_etcd(state: &Path) -> Result<u64> {
    let out = run_script("etcd-compact.sh", state, &[]).await?;
    out.trim().parse().map_err(|_| Error::Invalid {
        what: "etcd-compact.sh output",
        value: out,
        reason: "is not a revision",
    })
}

fn script(name: &str) -> PathBuf {
    workspace_root().join("testenv/scripts").join(name)
}

/// Runs a testenv script on the control plane in `state`; returns its standard output.
async fn run_script(name: &str, state: &Path, args: &[&str]) -> Result<String> {
    let path = script(name);
    let run = Command::new("bash")
        .arg(&path)
        .args(args)
        .env(STATE_DIR_ENV, state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let what = format!("{} {}", path.display(), args.join(" "));
    let output = tokio::time::timeout(SCRIPT_TIMEOUT, run)
        .await
        .map_err(|_| Error::Timeout {
            what: what.clone(),
            timeout: SCRIPT_TIMEOUT,
            last_observed: "still running (killed)".to_owned(),
        })?
        .map_err(|e| Error::io("running a testenv script", &path, e))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    Err(Error::io(
        "a testenv script failed",
        &path,
        std::io::Error::other(format!(
            "{STATE_DIR_ENV}={} {what} exited with {}: {}",
            state.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_up_sh() {
        let names: Vec<&str> = [
            Component::Etcd,
            Component::KubeApiserver,
            Component::KubeControllerManager,
            Component::KubeScheduler,
            Component::Kwok,
            Component::S3,
            Component::OciRegistry,
            Component::SourceController,
        ]
        .iter()
        .map(|c| c.name())
        .collect();
        let up = std::fs::read_to_string(script("up.sh")).unwrap();
        for name in names {
            assert!(up.contains(&format!("start {name} ")), "{name}");
        }
    }

    #[tokio::test]
    async fn a_control_plane_that_is_not_up_is_named() {
        let error = Component::Etcd
            .crash_and_restart(Path::new("/nonexistent/state"), Duration::ZERO)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("no control plane is up in /nonexistent/state"),
            "{error}"
        );
    }
}
