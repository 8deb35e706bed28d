//! The operator under test as its own process (so its memory and CPU time are its own), with
//! its default settings, authenticated as its ServiceAccount.
//!
//! Not testkit's `OperatorProcess`: that one watches a single namespace as the admin with 2 s
//! resyncs, as the integration tests want; the bench measures the operator as it is deployed.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// Environment variable naming the operator binary.
pub const OPERATOR_BIN_ENV: &str = "CELLD_OPERATOR_BIN";

/// How long the operator may take to start leading.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The operator binary `$CELLD_OPERATOR_BIN`.
pub fn binary() -> Result<PathBuf> {
    env_binary(
        OPERATOR_BIN_ENV,
        Error::NoOperator,
        "finding the operator binary ($CELLD_OPERATOR_BIN)",
    )
}

/// The file named by the environment variable `var`: `missing` when it is not set, an error
/// saying `what` was looked for when it names no file.
pub fn env_binary(var: &str, missing: Error, what: &'static str) -> Result<PathBuf> {
    let bin = std::env::var_os(var).map(PathBuf::from).ok_or(missing)?;
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(Error::Io {
            what,
            path: bin,
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }
}

/// A running operator; killed when dropped.
#[derive(Debug)]
pub struct Operator {
    child: Child,
    pid: u32,
    log: PathBuf,
}

impl Operator {
    /// Starts `bin` with `kubeconfig`, every namespace, default resyncs and no leader election,
    /// logging warnings to `log`; returns once it leads and watches.
    pub async fn start(bin: &Path, kubeconfig: &Path, log: &Path) -> Result<Self> {
        let port = free_port()?;
        let file =
            std::fs::File::create(log).map_err(Error::io("creating the operator's log", log))?;
        let err_file = file
            .try_clone()
            .map_err(Error::io("creating the operator's log", log))?;
        let child = Command::new(bin)
            .args([
                "--leader-elect=false",
                "--metrics-addr",
                &format!("127.0.0.1:{port}"),
            ])
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::from(file))
            .stderr(Stdio::from(err_file))
            .kill_on_drop(true)
            .spawn()
            .map_err(Error::io("starting the operator", bin))?;
        let pid = child.id().unwrap_or(0);
        let mut operator = Operator {
            child,
            pid,
            log: log.to_path_buf(),
        };
        operator.wait_leading(port).await?;
        Ok(operator)
    }

    async fn wait_leading(&mut self, port: u16) -> Result<()> {
        let deadline = tokio::time::Instant::now() + START_TIMEOUT;
        let mut seen = String::from("nothing yet");
        while tokio::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(Error::Process {
                    what: "the operator".into(),
                    detail: format!(
                        "exited with {status} while starting; its log:\n{}",
                        self.log_tail()
                    ),
                });
            }
            match metrics(port).await {
                Ok(m) if m.contains("celld_operator_leader 1") => return Ok(()),
                Ok(_) => seen = "metrics served, not leading yet".into(),
                Err(e) => seen = format!("metrics endpoint: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(Error::Timeout {
            what: "the operator to lead and watch".into(),
            seconds: START_TIMEOUT.as_secs(),
            seen,
            logs: self.log.clone(),
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Fails, with the end of its log, if it has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        match self.child.try_wait() {
            Ok(Some(status)) => Err(Error::Process {
                what: "the operator".into(),
                detail: format!("exited with {status}; its log:\n{}", self.log_tail()),
            }),
            _ => Ok(()),
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Stops it (SIGKILL) and waits for it.
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
        .map_err(Error::io("finding a free port", "127.0.0.1:0"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(Error::io("finding a free port", "127.0.0.1:0"))
}
