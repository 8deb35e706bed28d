//! The operator as a process, as tests of other packages and the demo run it: the
//! `celld-operator` binary, watching one namespace, without leader election, with quick
//! resyncs, authenticated as the admin of the local control plane.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::cargo_bin::cargo_bin;
use crate::emulators::{AzureSettings, GcsSettings};
use crate::error::{Error, ProcessError, Result};
use crate::paths;
use crate::wait::{Check, wait_until};

/// Environment variable naming a prebuilt operator binary (else it is built with cargo).
pub const OPERATOR_BIN_ENV: &str = "CELLD_OPERATOR_BIN";

/// How long the operator may take to start watching.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running operator process; killed when dropped.
#[derive(Debug)]
pub struct OperatorProcess {
    child: Child,
    metrics_port: u16,
    log: PathBuf,
}

impl OperatorProcess {
    /// Seconds between reconciles of a healthy fleet (which refresh its deployed version).
    pub const RESYNC_SECONDS: u64 = 2;

    /// Seconds between checks of a fleet whose bucket has no deployment yet.
    pub const PENDING_RESYNC_SECONDS: u64 = 1;

    /// Builds the operator (or takes `$CELLD_OPERATOR_BIN`) and starts it on `namespace`,
    /// logging to `log`; returns once it leads and watches.
    pub async fn start(namespace: &str, log: &Path) -> Result<Self> {
        let bin = cargo_bin("celld-operator", "celld-operator", OPERATOR_BIN_ENV).await?;
        Self::start_binary(&bin, namespace, log).await
    }

    /// [`OperatorProcess::start`], reading gs:// and az:// buckets at the local emulators
    /// (`--gcs-endpoint`, `--azure-blob-endpoint`).
    pub async fn start_with_emulators(
        namespace: &str,
        log: &Path,
        gcs: &GcsSettings,
        azure: &AzureSettings,
    ) -> Result<Self> {
        Self::start_with_identity(namespace, log, gcs, azure, &[]).await
    }

    /// [`OperatorProcess::start_with_emulators`] with `identity` added to the operator's
    /// environment: credentials its default chain finds, standing in for the cloud identity
    /// of its ServiceAccount.
    pub async fn start_with_identity(
        namespace: &str,
        log: &Path,
        gcs: &GcsSettings,
        azure: &AzureSettings,
        identity: &[(&str, String)],
    ) -> Result<Self> {
        let bin = cargo_bin("celld-operator", "celld-operator", OPERATOR_BIN_ENV).await?;
        let extra = [
            format!("--gcs-endpoint={}", gcs.endpoint),
            format!("--azure-blob-endpoint={}", azure.blob_endpoint),
        ];
        Self::run(&bin, namespace, log, &extra, identity).await
    }

    /// Starts the operator binary `bin` on `namespace`, logging to `log`.
    pub async fn start_binary(bin: &Path, namespace: &str, log: &Path) -> Result<Self> {
        Self::run(bin, namespace, log, &[], &[]).await
    }

    async fn run(
        bin: &Path,
        namespace: &str,
        log: &Path,
        extra: &[String],
        env: &[(&str, String)],
    ) -> Result<Self> {
        let metrics_port = free_port()?;
        let file = std::fs::File::create(log)
            .map_err(|e| Error::io("creating the operator's log", log, e))?;
        let err_file = file
            .try_clone()
            .map_err(|e| Error::io("creating the operator's log", log, e))?;
        let child = Command::new(bin)
            .args(["--leader-elect=false", "--namespace", namespace])
            .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")])
            .args(["--resync-seconds", &Self::RESYNC_SECONDS.to_string()])
            .args([
                "--pending-resync-seconds",
                &Self::PENDING_RESYNC_SECONDS.to_string(),
            ])
            .args(["--s3-timeout-seconds", "3"])
            .args(extra)
            .envs(env.iter().map(|(name, value)| (name, value)))
            .env("KUBECONFIG", paths::kubeconfig())
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::from(file))
            .stderr(Stdio::from(err_file))
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| ProcessError::Spawn {
                what: "the operator",
                path: bin.to_path_buf(),
                source,
            })?;
        let mut operator = OperatorProcess {
            child,
            metrics_port,
            log: log.to_path_buf(),
        };
        operator.wait_leading().await?;
        Ok(operator)
    }

    async fn wait_leading(&mut self) -> Result<()> {
        let port = self.metrics_port;
        let started = wait_until("the operator to lead and watch", START_TIMEOUT, || async {
            match metrics(port).await {
                Ok(m) if m.contains("celld_operator_leader 1") => Check::Done(()),
                Ok(_) => Check::Pending("metrics served, not leading yet".into()),
                Err(e) => Check::Pending(format!("metrics endpoint: {e}")),
            }
        });
        let exited = async {
            loop {
                if let Ok(Some(status)) = self.child.try_wait() {
                    return status;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        let outcome = tokio::select! {
            started = started => Ok(started),
            status = exited => Err(status),
        };
        match outcome {
            Ok(started) => started,
            Err(status) => Err(ProcessError::Exited {
                what: "the operator",
                status: status.to_string(),
                log: self.log.clone(),
                tail: self.log_tail(),
            }
            .into()),
        }
    }

    /// The operator's log file.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The last 40 lines of its log (for failure messages).
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Stops the operator (SIGKILL) and waits for it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

async fn metrics(port: u16) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await?;
    let mut body = String::new();
    stream.read_to_string(&mut body).await?;
    Ok(body)
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::io("finding a free port", "127.0.0.1:0", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::io("finding a free port", "127.0.0.1:0", e))
}
