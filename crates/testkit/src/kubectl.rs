//! Running the kubectl built for the local control plane (`.testenv/bin/kubectl`) with the test
//! kubeconfig.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::error::{Error, Result};
use crate::paths;

/// How long one kubectl run may take before it is killed.
pub const KUBECTL_TIMEOUT: Duration = Duration::from_secs(60);

/// The kubectl of the local control plane, bound to the test kubeconfig.
#[derive(Debug, Clone)]
pub struct Kubectl {
    binary: PathBuf,
    kubeconfig: PathBuf,
    namespace: Option<String>,
}

impl Default for Kubectl {
    fn default() -> Self {
        Self::new()
    }
}

impl Kubectl {
    /// `.testenv/bin/kubectl` with the kubeconfig of [`paths::kubeconfig`].
    pub fn new() -> Self {
        Kubectl {
            binary: paths::kubectl(),
            kubeconfig: paths::kubeconfig(),
            namespace: None,
        }
    }

    /// The same kubectl, passing `--namespace=<namespace>` on every run.
    pub fn in_namespace(&self, namespace: impl Into<String>) -> Self {
        Kubectl {
            namespace: Some(namespace.into()),
            ..self.clone()
        }
    }

    /// A command for `kubectl <args>` with the kubeconfig (and namespace) set, for callers that
    /// need full control (environment, streaming). `KUBECONFIG` is set too, for plugins.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new(&self.binary);
        command
            .env("KUBECONFIG", &self.kubeconfig)
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()));
        if let Some(namespace) = &self.namespace {
            command.arg(format!("--namespace={namespace}"));
        }
        command.args(args).kill_on_drop(true);
        command
    }

    /// Runs `kubectl <args>` and returns its stdout; fails if it exits non-zero (the error carries
    /// stderr) or takes longer than [`KUBECTL_TIMEOUT`].
    pub async fn run<I, S>(&self, args: I) -> Result<String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let output = self.output(&args, None).await?;
        check_success(&args, output)
    }

    /// Runs `kubectl <args>` with `stdin` as its standard input (closed after it) and returns its
    /// stdout; fails like [`Kubectl::run`].
    pub async fn run_with_stdin<I, S>(&self, args: I, stdin: &[u8]) -> Result<String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let output = self.output(&args, Some(stdin)).await?;
        check_success(&args, output)
    }

    /// Runs `kubectl <args>` (with `stdin` if given, else no input) and returns its raw output,
    /// whatever its exit status. Fails only if it cannot start or exceeds [`KUBECTL_TIMEOUT`].
    pub async fn output<I, S>(&self, args: I, stdin: Option<&[u8]>) -> Result<Output>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let mut command = self.command(&args);
        command
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|source| Error::KubectlSpawn {
            path: self.binary.clone(),
            source,
        })?;
        let input = stdin.map(<[u8]>::to_vec);
        let mut pipe = child.stdin.take();
        let run = async move {
            if let (Some(pipe), Some(input)) = (pipe.as_mut(), input) {
                // A command that exits before reading all input closes the pipe: not an error.
                let _ = pipe.write_all(&input).await;
            }
            drop(pipe);
            child.wait_with_output().await
        };
        match tokio::time::timeout(KUBECTL_TIMEOUT, run).await {
            Ok(Ok(output)) => Ok(output),
            Ok(Err(source)) => Err(Error::KubectlSpawn {
                path: self.binary.clone(),
                source,
            }),
            Err(_) => Err(Error::Timeout {
                what: format!("`kubectl {}` to finish (it was killed)", join(&args)),
                timeout: KUBECTL_TIMEOUT,
                last_observed: "still running".to_owned(),
            }),
        }
    }
}

fn check_success<S: AsRef<OsStr>>(args: &[S], output: Output) -> Result<String> {
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(Error::KubectlFailed {
            args: join(args),
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

fn join<S: AsRef<OsStr>>(args: &[S]) -> String {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
