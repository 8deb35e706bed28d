//! A fresh local control plane for one run: `testenv/scripts/up.sh` with a state directory of
//! its own, the audit log on, and the run's fake nodes.

use super::health;
use super::kwok_refusals;
use crate::error::{Error, Result};
use crate::measure::proc_stats::{is_running, rss_kib};
use crate::results::ControlPlaneMemory;
use crate::settings::{APISERVER_FLAGS, BENCH, CONTROLLER_MANAGER_FLAGS};
use celld_testkit::S3Settings;
use celld_testkit::faults::PrivateControlPlane;
use celld_testkit::paths::{STATE_DIR_ENV, workspace_root};
use jiff::Timestamp;
use kube::Client;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

/// Longest a start or stop may take.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

/// Lines of a failed script's output shown in the error.
const OUTPUT_TAIL: usize = 20;

/// The components of a control plane whose CPU the bench reports, as up.sh names them.
pub const BUSY_COMPONENTS: [&str; 6] = [
    "kube-apiserver",
    "etcd",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
    "s3s-fs",
];

/// Where the bench's control planes keep their state (ignored by git like `.testenv/`).
pub fn bench_state_root() -> PathBuf {
    workspace_root().join(".testenv-bench")
}

/// A running control plane of the bench's own.
pub struct BenchControlPlane {
    plane: PrivateControlPlane,
    client: Client,
    s3: S3Settings,
}

impl BenchControlPlane {
    /// Starts a fresh control plane named `name` (anything left under that name is stopped and
    /// removed first) with `nodes` fake nodes, and installs the project's CRDs and admission
    /// policies.
    pub async fn start(name: &str, nodes: usize) -> Result<Self> {
        let dir = bench_state_root().join(name);
        if dir.exists() {
            let _ = script("down.sh", &dir, &[]).await;
            std::fs::remove_dir_all(&dir)
                .map_err(Error::io("removing an old state directory", &dir))?;
        }
        std::fs::create_dir_all(&dir).map_err(Error::io("creating a state directory", &dir))?;
        let nodes = nodes.to_string();
        script(
            "up.sh",
            &dir,
            &[
                ("CELLD_TESTENV_NODES", nodes.as_str()),
                ("CELLD_TESTENV_AUDIT", "1"),
                ("CELLD_TESTENV_APISERVER_FLAGS", APISERVER_FLAGS),
                (
                    "CELLD_TESTENV_CONTROLLER_MANAGER_FLAGS",
                    CONTROLLER_MANAGER_FLAGS,
                ),
            ],
        )
        .await?;
        // Adopt it (up.sh finds it up and healthy): it is stopped when dropped.
        let plane = PrivateControlPlane::start(&dir).await?;
        let client = plane.client().await?;
        celld_testkit::install_crds(&client).await?;
        let s3 = plane.s3()?;
        Ok(BenchControlPlane { plane, client, s3 })
    }

    /// An admin client.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// Its S3 server.
    pub fn s3(&self) -> &S3Settings {
        &self.s3
    }

    /// Its state directory.
    pub fn dir(&self) -> &Path {
        self.plane.dir()
    }

    /// The admin kubeconfig (its server address and CA are reused for the operator's).
    pub fn kubeconfig(&self) -> PathBuf {
        self.plane.kubeconfig()
    }

    /// A port up.sh chose (`APISERVER_PORT`, `S3_PORT`... of `ports.env`), 0 when unknown.
    pub fn port(&self, key: &str) -> u16 {
        let text = std::fs::read_to_string(self.dir().join("ports.env")).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.split_once('='))
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// The API server's audit log.
    pub fn audit_log(&self) -> PathBuf {
        self.dir().join("logs").join("audit.log")
    }

    /// The stage plays of kwok's the API server refused between `from` and `to`.
    pub fn kwok_refused(&self, from: Timestamp, to: Timestamp) -> u64 {
        kwok_refusals::refused(&self.dir().join("logs").join("kwok.log"), from, to)
    }

    /// The resident memory of kube-apiserver and etcd now.
    pub fn memory(&self) -> ControlPlaneMemory {
        ControlPlaneMemory {
            apiserver_kib: self.component_rss_kib("kube-apiserver"),
            etcd_kib: self.component_rss_kib("etcd"),
        }
    }

    /// The resident memory of one of its components (as up.sh names it), KiB; 0 when it does
    /// not run.
    fn component_rss_kib(&self, component: &str) -> u64 {
        self.component_pid(component).map_or(0, rss_kib)
    }

    /// The pid of one of its components (as up.sh names it), if it runs.
    fn component_pid(&self, component: &str) -> Option<u32> {
        std::fs::read_to_string(self.dir().join("run").join(format!("{component}.pid")))
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
            .filter(|&pid| is_running(pid))
    }

    /// What shares the machine's cores while fleets converge, by name, with their pids: its
    /// components (those that run) and the bench itself.
    pub fn busy_processes(&self) -> Vec<(String, u32)> {
        let mut processes: Vec<(String, u32)> = BUSY_COMPONENTS
            .iter()
            .filter_map(|c| self.component_pid(c).map(|pid| ((*c).to_string(), pid)))
            .collect();
        processes.push((BENCH.into(), std::process::id()));
        processes
    }

    /// `error`, which ended `what` on it, with what gave out in the control plane (read now,
    /// before it is stopped); it is then stopped, its logs kept for a look.
    pub async fn gave_out(self, what: String, error: Error) -> Error {
        let health = health::inspect(self.dir());
        let logs = self.dir().join("logs");
        drop(self);
        Error::GaveOut {
            what,
            source: Box::new(error),
            health: health.to_string(),
            logs,
        }
    }

    /// Stops it and removes its state, logs included (the audit log of a large run takes
    /// hundreds of MiB).
    pub async fn remove(self) -> Result<()> {
        let dir = self.dir().to_path_buf();
        self.plane.stop().await?;
        std::fs::remove_dir_all(&dir).map_err(Error::io("removing a state directory", &dir))
    }
}

async fn script(name: &str, dir: &Path, env: &[(&str, &str)]) -> Result<()> {
    let path = workspace_root().join("testenv/scripts").join(name);
    let what = format!("{STATE_DIR_ENV}={} {}", dir.display(), path.display());
    let run = Command::new("bash")
        .arg(&path)
        .env(STATE_DIR_ENV, dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(SCRIPT_TIMEOUT, run)
        .await
        .map_err(|_| Error::Process {
            what: what.clone(),
            detail: format!(
                "still running after {} s (killed)",
                SCRIPT_TIMEOUT.as_secs()
            ),
        })?
        .map_err(Error::io("running a testenv script", &path))?;
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    Err(Error::Process {
        what,
        detail: format!(
            "{} (is the control plane built? `make testenv`):\n{}",
            output.status,
            lines[lines.len().saturating_sub(OUTPUT_TAIL)..].join("\n")
        ),
    })
}
