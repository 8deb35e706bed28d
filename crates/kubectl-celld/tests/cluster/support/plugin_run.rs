//! Running the plugin binary: to its end, or spawned with its output collected line by line,
//! paused and resumed.

use super::{BIN, RUN_TIMEOUT, TestResult};
use celld_testkit::TestEnv;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;

/// The outcome of a plugin run.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// The plugin with the test kubeconfig (unless `args` name one) and the test namespace
/// (unless `args` name one), global flags after the command. A `deploy` or `rollback` that
/// does not say how to wait gets `--no-wait`: most tests run no operator, which is what writes
/// the status the wait reads (the tests of the wait pass `--wait-timeout`).
pub fn plugin(env: &TestEnv, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    let publishes = matches!(args.first(), Some(&"deploy" | &"rollback"));
    if publishes
        && !args
            .iter()
            .any(|a| matches!(*a, "--no-wait" | "--wait-timeout"))
    {
        cmd.arg("--no-wait");
    }
    if !args.contains(&"--kubeconfig") {
        cmd.arg("--kubeconfig")
            .arg(celld_testkit::paths::kubeconfig());
    }
    if !args.iter().any(|a| matches!(*a, "-n" | "--namespace")) {
        cmd.args(["-n", env.namespace()]);
    }
    cmd.env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Runs the plugin to its end.
pub async fn run(env: &TestEnv, args: &[&str]) -> TestResult<Run> {
    let out = tokio::time::timeout(RUN_TIMEOUT, plugin(env, args).output())
        .await
        .map_err(|_| format!("kubectl-celld {args:?} did not finish within {RUN_TIMEOUT:?}"))??;
    Ok(Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Collects a stream's lines; `seen` reports each line as it comes.
pub fn collect(
    stream: impl AsyncRead + Unpin + Send + 'static,
    seen: Option<tokio::sync::mpsc::UnboundedSender<String>>,
) -> (Arc<Mutex<String>>, tokio::task::JoinHandle<()>) {
    collect_with(stream, seen, |_| {})
}

/// [`collect`], calling `first` on each line before anything else sees it.
pub(super) fn collect_with(
    stream: impl AsyncRead + Unpin + Send + 'static,
    seen: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    mut first: impl FnMut(&str) + Send + 'static,
) -> (Arc<Mutex<String>>, tokio::task::JoinHandle<()>) {
    let text = Arc::new(Mutex::new(String::new()));
    let t = text.clone();
    let task = tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            first(&line);
            if let Ok(mut s) = t.lock() {
                s.push_str(&line);
                s.push('\n');
            }
            if let Some(tx) = &seen {
                let _ = tx.send(line);
            }
        }
    });
    (text, task)
}

/// Stops the process `pid` (SIGSTOP) or lets it go on (SIGCONT), with no process of its own in
/// between: the plugin is stopped the moment it says it created its Job.
pub fn pause(pid: u32, stop: bool) -> TestResult {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| format!("{pid} is no process id"))?;
    let signal = if stop {
        rustix::process::Signal::STOP
    } else {
        rustix::process::Signal::CONT
    };
    rustix::process::kill_process(pid, signal)
        .map_err(|e| format!("signalling the plugin ({pid:?}) failed: {e}"))?;
    Ok(())
}

/// Waits for a line containing `needle` on `rx`.
pub async fn wait_line(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    needle: &str,
    timeout: Duration,
) -> TestResult<String> {
    let found = tokio::time::timeout(timeout, async {
        while let Some(line) = rx.recv().await {
            if line.contains(needle) {
                return Some(line);
            }
        }
        None
    })
    .await;
    match found {
        Ok(Some(line)) => Ok(line),
        Ok(None) => Err(format!("the output ended without a line containing {needle:?}").into()),
        Err(_) => Err(format!("no line containing {needle:?} within {timeout:?}").into()),
    }
}

/// Waits until the collected text contains `needle`.
pub async fn wait_text(text: &Arc<Mutex<String>>, needle: &str, timeout: Duration) -> TestResult {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if text.lock().map(|t| t.contains(needle)).unwrap_or(false) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("no {needle:?} in the output within {timeout:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
