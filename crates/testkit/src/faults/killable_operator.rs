//! The operator binary as its own process: started against a kubeconfig with its output in a
//! log file, killed with SIGKILL, started again with the same flags.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::error::{Error, Result};

/// How long a started operator may take to answer `/readyz`.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Lines of the log shown when the operator does not come up.
const LOG_TAIL: usize = 20;

/// A `celld-operator` process that a test kills and starts again: any flags, any kubeconfig
/// (a private control plane's, for example). Its stdout and stderr go to one log file, which
/// every start appends to (after a `==== start N` line). The process is killed when this is
/// dropped. (For a plain operator on a test namespace, see [`crate::OperatorProcess`].)
#[derive(Debug)]
pub struct KillableOperator {
    binary: PathBuf,
    kubeconfig: PathBuf,
    log: PathBuf,
    args: Vec<String>,
    child: Option<Child>,
    port: u16,
    starts: u32,
}

impl KillableOperator {
    /// Starts `binary` with `args` and `--metrics-addr 127.0.0.1:<free port>`, `KUBECONFIG` set
    /// to `kubeconfig`, its output appended to `log`, and waits until it answers `/readyz`.
    pub async fn start(
        binary: impl Into<PathBuf>,
        kubeconfig: impl Into<PathBuf>,
        log: impl Into<PathBuf>,
        args: &[&str],
    ) -> Result<Self> {
        let mut process = KillableOperator {
            binary: binary.into(),
            kubeconfig: kubeconfig.into(),
            log: log.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            child: None,
            port: 0,
            starts: 0,
        };
        process.restart().await?;
        Ok(process)
    }

    /// Starts the process again with the same flags (a new metrics port) and waits until it
    /// answers `/readyz`. Kills the running one first, if any.
    pub async fn restart(&mut self) -> Result<()> {
        if self.is_running() {
            self.kill().await?;
        }
        self.port = free_port()?;
        self.starts += 1;
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| Error::io("opening the operator's log", &self.log, e))?;
        writeln!(
            log,
            "==== start {} of {}: {}",
            self.starts,
            self.binary.display(),
            self.args.join(" ")
        )
        .map_err(|e| Error::io("writing the operator's log", &self.log, e))?;
        let stderr = log
            .try_clone()
            .map_err(|e| Error::io("opening the operator's log", &self.log, e))?;
        let child = Command::new(&self.binary)
            .args(&self.args)
            .args(["--metrics-addr", &format!("127.0.0.1:{}", self.port)])
            .env("KUBECONFIG", &self.kubeconfig)
            // Plain text: the log is read by tests, not a terminal.
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(stderr))
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Error::io("starting the operator", &self.binary, e))?;
        self.child = Some(child);
        self.wait_ready().await
    }

    async fn wait_ready(&mut self) -> Result<()> {
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        loop {
            if !self.is_running() {
                return Err(self.not_ready("exited"));
            }
            if let Ok(reply) = http_get(self.port, "/readyz").await
                && reply.split_whitespace().nth(1) == Some("200")
            {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(self.not_ready("is still running"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn not_ready(&self, state: &str) -> Error {
        Error::Timeout {
            what: format!("the operator {} to answer /readyz", self.binary.display()),
            timeout: READY_TIMEOUT,
            last_observed: format!("it {state}; the end of its log:\n{}", self.log_tail()),
        }
    }

    /// Kills the process with SIGKILL (no graceful shutdown) and waits until it is gone.
    pub async fn kill(&mut self) -> Result<Option<ExitStatus>> {
        let Some(mut child) = self.child.take() else {
            return Ok(None);
        };
        // start_kill sends SIGKILL; it fails only when the process already exited.
        let _ = child.start_kill();
        child
            .wait()
            .await
            .map(Some)
            .map_err(|e| Error::io("waiting for the killed operator", &self.binary, e))
    }

    /// Whether the process runs (it has not exited).
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// The port of its `/healthz`, `/readyz` and `/metrics` endpoints.
    pub fn metrics_port(&self) -> u16 {
        self.port
    }

    /// The body of `/metrics` (the Prometheus text format).
    pub async fn metrics(&self) -> Result<String> {
        let reply = http_get(self.port, "/metrics")
            .await
            .map_err(|e| Error::io("reading the operator's /metrics", &self.binary, e))?;
        Ok(reply
            .split_once("\r\n\r\n")
            .map_or(reply.as_str(), |(_, body)| body)
            .to_owned())
    }

    /// How many times the process was started.
    pub fn starts(&self) -> u32 {
        self.starts
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Everything the process printed, over every start.
    pub fn log(&self) -> Result<String> {
        std::fs::read(&self.log)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|e| Error::io("reading the operator's log", &self.log, e))
    }

    /// The log lines that report a panic (Rust prints `panicked at`).
    pub fn panics(&self) -> Result<Vec<String>> {
        Ok(self
            .log()?
            .lines()
            .filter(|line| line.contains("panicked"))
            .map(str::to_owned)
            .collect())
    }

    fn log_tail(&self) -> String {
        let text = self.log().unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(LOG_TAIL)..].join("\n")
    }
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::io("finding a free port", "127.0.0.1:0", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::io("finding a free port", "127.0.0.1:0", e))
}

/// A plain HTTP/1.0 GET of `path` on 127.0.0.1:`port`: the status line, headers and body.
async fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        stream
            .write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
            .await?;
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await?;
        Ok(reply)
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer within 5 s"))?
}
