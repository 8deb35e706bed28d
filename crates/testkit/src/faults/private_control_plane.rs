//! A control plane of the test's own (`testenv/scripts/up.sh` with `CELLD_TESTENV_DIR`), for
//! faults that must not reach the shared one: stopping its S3 server, for example.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use kube::Client;
use tokio::process::Command;

use crate::client::config_from;
use crate::error::{Error, Result};
use crate::namespace::keep;
use crate::paths::{STATE_DIR_ENV, workspace_root};
use crate::s3::S3Settings;

/// Longest a start (or stop) of the control plane may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(240);

/// Lines of a failed script's output shown in the error.
const OUTPUT_TAIL: usize = 25;

/// A local control plane with its state in a directory of its own, independent of the shared
/// one (`make cluster-up`): its own ports, etcd, kwok and S3 server. Stopped by
/// [`PrivateControlPlane::stop`] or when dropped (unless `CELLD_TEST_KEEP_NAMESPACES=1`).
#[derive(Debug)]
pub struct PrivateControlPlane {
    dir: PathBuf,
    stopped: bool,
}

impl PrivateControlPlane {
    /// Starts a control plane with its state in `dir` (an absolute path), or finds it already
    /// up and healthy there. Fails, with the end of up.sh's output, when it does not come up
    /// (for example when `make testenv` has not built the binaries yet).
    pub async fn start(dir: impl Into<PathBuf>) -> Result<Self> {
        Self::start_with(dir, &[]).await
    }

    /// [`PrivateControlPlane::start`] with up.sh's settings `env` (`CELLD_TESTENV_AUDIT=1`
    /// for an audit log of every request in `<dir>/logs/audit.log`, for example).
    pub async fn start_with(dir: impl Into<PathBuf>, env: &[(&str, &str)]) -> Result<Self> {
        let dir = dir.into();
        run_script_with("up.sh", &[], env, &dir).await?;
        Ok(PrivateControlPlane {
            dir,
            stopped: false,
        })
    }

    /// The state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its admin kubeconfig.
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    /// An admin client.
    pub async fn client(&self) -> Result<Client> {
        let config = config_from(&self.kubeconfig()).await?;
        Client::try_from(config)
            .map_err(|e| Error::kube("building a client for the private control plane", e))
    }

    /// Its S3 server's settings.
    pub fn s3(&self) -> Result<S3Settings> {
        S3Settings::from_file(&self.dir.join("s3.env"))
    }

    /// Stops one of its components (`etcd`, `kube-apiserver`, `kube-controller-manager`,
    /// `kube-scheduler`, `kwok`, `s3s-fs`, `oci-registry`, `source-controller`...) with `signal` (`TERM`, `KILL`) and waits until its
    /// process group is gone (`testenv/scripts/restart.sh --stop`).
    pub async fn stop_component(&self, component: &str, signal: &str) -> Result<()> {
        run_script_with(
            "restart.sh",
            &["--stop", "--signal", signal, component],
            &[],
            &self.dir,
        )
        .await
    }

    /// Starts a component [`PrivateControlPlane::stop_component`] stopped exactly as up.sh
    /// started it (same command line and environment, its own process group, output appended
    /// to its log) and waits until it answers (`testenv/scripts/restart.sh --start`).
    pub async fn start_component(&self, component: &str) -> Result<()> {
        run_script_with("restart.sh", &["--start", component], &[], &self.dir).await
    }

    /// Its kubectl (a link into the binary cache).
    pub fn kubectl(&self) -> PathBuf {
        self.dir.join("bin").join("kubectl")
    }

    /// Stops everything (`testenv/scripts/down.sh`); the logs stay in `<dir>/logs`.
    pub async fn stop(mut self) -> Result<()> {
        self.stopped = true;
        run_script("down.sh", &self.dir).await
    }
}

impl Drop for PrivateControlPlane {
    fn drop(&mut self) {
        if self.stopped || keep() {
            return;
        }
        // Best effort: a test that failed half-way must not leave a control plane running.
        let _ = std::process::Command::new("bash")
            .arg(script("down.sh"))
            .env(STATE_DIR_ENV, &self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn script(name: &str) -> PathBuf {
    workspace_root().join("testenv/scripts").join(name)
}

async fn run_script(name: &str, dir: &Path) -> Result<()> {
    run_script_with(name, &[], &[], dir).await
}

async fn run_script_with(
    name: &str,
    args: &[&str],
    env: &[(&str, &str)],
    dir: &Path,
) -> Result<()> {
    let path = script(name);
    let run = Command::new("bash")
        .arg(&path)
        .args(args)
        .envs(env.iter().copied())
        .env(STATE_DIR_ENV, dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let shown = std::iter::once(format!(
        "{STATE_DIR_ENV}={} {}",
        dir.display(),
        path.display()
    ))
    .chain(args.iter().map(|a| (*a).to_owned()))
    .collect::<Vec<_>>()
    .join(" ");
    let output = match tokio::time::timeout(SCRIPT_TIMEOUT, run).await {
        Ok(result) => result.map_err(|e| Error::io("running a testenv script", &path, e))?,
        Err(_) => {
            return Err(Error::Timeout {
                what: shown,
                timeout: SCRIPT_TIMEOUT,
                last_observed: "still running (killed)".to_owned(),
            });
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(OUTPUT_TAIL)..].join("\n");
    Err(Error::io(
        "a testenv script failed (is the control plane built? `make testenv`)",
        &path,
        std::io::Error::other(format!("{shown} exited with {}:\n{tail}", output.status)),
    ))
}
