//! Running a command in a pod over `pods/exec`: optional stdin, stdout and stderr streamed live
//! or captured, and the command's exit code.

use crate::error::{Error, Result};
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::Api;
use kube::api::AttachParams;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Where a stream of the command goes.
pub enum Sink {
    /// Copied to this process's stdout.
    Stdout,
    /// Copied to this process's stderr.
    Stderr,
    /// Kept, returned in [`Finished`].
    Capture,
    /// Copied to this process's stdout, and kept.
    StdoutKept,
    /// Copied to this process's stderr, and kept.
    StderrKept,
}

/// Writes the command's stdin; gets the writer and returns when all is written. The writer is
/// kept open until the command ends (closing it early ends the whole stream on servers without
/// the v5 exec protocol), so the command must not wait for end-of-input.
pub type Feeder =
    Box<dyn FnOnce(Box<dyn AsyncWrite + Unpin + Send>) -> BoxFuture<'static, Result<Keep>> + Send>;

/// What a [`Feeder`] hands back: the writer, kept open until the command ends.
pub type Keep = Box<dyn AsyncWrite + Unpin + Send>;

/// A command to run.
pub struct Spec {
    /// Program and arguments (no shell unless the program is one).
    pub command: Vec<String>,
    /// The container to run it in.
    pub container: String,
    /// Where stdout goes.
    pub stdout: Sink,
    /// Where stderr goes.
    pub stderr: Sink,
    /// What to write to stdin, if anything.
    pub stdin: Option<Feeder>,
}

impl Spec {
    /// `command` in `container`, its stdout and stderr captured, nothing on its stdin.
    pub fn captured(container: &str, command: Vec<String>) -> Self {
        Self {
            command,
            container: container.into(),
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            stdin: None,
        }
    }
}

/// A command that ran to its end.
#[derive(Debug, Default)]
pub struct Finished {
    /// Its exit code.
    pub code: i32,
    /// Captured stdout (empty unless [`Sink::Capture`] or [`Sink::StdoutKept`]).
    pub stdout: Vec<u8>,
    /// Captured stderr (empty unless [`Sink::Capture`] or [`Sink::StderrKept`]).
    pub stderr: Vec<u8>,
}

/// Runs `spec` in `pod` and waits for it to end. A command that could not start at all (not in
/// the image, for example) is an error; a command that ran and failed is a [`Finished`] with a
/// non-zero code.
pub async fn run(pods: &Api<Pod>, pod: &str, spec: Spec) -> Result<Finished> {
    let namespace = pods.namespace().unwrap_or_default().to_string();
    let params = AttachParams::default()
        .container(spec.container.clone())
        .stdin(spec.stdin.is_some())
        .stdout(true)
        .stderr(true);
    let mut attached = pods
        .exec(pod, spec.command.clone(), &params)
        .await
        .map_err(|e| Error::api("create", "pods/exec", Some(&namespace), e))?;

    let out = attached.stdout().map(|r| copy(r, spec.stdout));
    let err = attached.stderr().map(|r| copy(r, spec.stderr));
    let out = out.map(tokio::spawn);
    let err = err.map(tokio::spawn);
    let status = attached.take_status();
    let writer = attached.stdin();

    // Feed stdin while waiting for the end: if the command dies early, its exit status (and
    // not the broken stdin) is what the caller hears about.
    let feeding = async {
        match (spec.stdin, writer) {
            (Some(feed), Some(w)) => feed(Box::new(w)).await.map(Some),
            _ => Ok(None),
        }
    };
    let ending = async {
        match status {
            Some(s) => s.await,
            None => None,
        }
    };
    let (fed, status) = tokio::join!(feeding, ending);
    let stdout = join(out).await?;
    let stderr = join(err).await?;
    // Only now close stdin: the command has ended.
    let fed = fed.map(drop);
    // The status arrived, or the stream closed; the task's own error adds nothing then.
    let _ = attached.join().await;
    let code = exit_code(status.as_ref()).map_err(|message| {
        Error::Deploy(format!(
            "`{}` could not run in pod {namespace}/{pod}: {message}",
            spec.command.join(" ")
        ))
    })?;
    if code == 0 {
        fed?;
    }
    Ok(Finished {
        code,
        stdout,
        stderr,
    })
}

async fn copy(mut from: impl AsyncRead + Unpin, sink: Sink) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    match sink {
        Sink::Capture => {
            from.read_to_end(&mut kept).await?;
        }
        Sink::Stdout => pump(&mut from, &mut tokio::io::stdout(), None).await?,
        Sink::Stderr => pump(&mut from, &mut tokio::io::stderr(), None).await?,
        Sink::StdoutKept => pump(&mut from, &mut tokio::io::stdout(), Some(&mut kept)).await?,
        Sink::StderrKept => pump(&mut from, &mut tokio::io::stderr(), Some(&mut kept)).await?,
    }
    Ok(kept)
}

/// Copies chunk by chunk, flushing each, so output shows up as the command writes it; keeps a
/// copy in `kept` when given.
async fn pump(
    from: &mut (impl AsyncRead + Unpin),
    to: &mut (impl AsyncWrite + Unpin),
    mut kept: Option<&mut Vec<u8>>,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.flush().await;
        }
        to.write_all(&buf[..n]).await?;
        to.flush().await?;
        if let Some(kept) = kept.as_deref_mut() {
            kept.extend_from_slice(&buf[..n]);
        }
    }
}

async fn join(task: Option<tokio::task::JoinHandle<std::io::Result<Vec<u8>>>>) -> Result<Vec<u8>> {
    match task {
        None => Ok(Vec::new()),
        Some(t) => match t.await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(Error::Output(e.to_string())),
            Err(e) => Err(Error::Output(e.to_string())),
        },
    }
}

/// The exit code in an exec's final Status: 0 for Success; for a failure, the `ExitCode` cause
/// a kubelet sends, or the `exit status N` in the message of runtimes that only send a message
/// (kwok). Any other failure means the command did not run; the message says why.
pub fn exit_code(status: Option<&Status>) -> Result<i32, String> {
    let Some(status) = status else {
        return Err("the connection closed before the command's exit status arrived".to_string());
    };
    if status.status.as_deref() == Some("Success") {
        return Ok(0);
    }
    let from_cause = status.details.as_ref().and_then(|d| {
        d.causes.iter().flatten().find_map(|c| {
            (c.reason.as_deref() == Some("ExitCode"))
                .then(|| c.message.as_deref()?.trim().parse::<i32>().ok())
                .flatten()
        })
    });
    if let Some(code) = from_cause {
        return Ok(code);
    }
    let message = status.message.as_deref().unwrap_or_default().trim();
    if let Some(code) = code_in_message(message) {
        return Ok(code);
    }
    Err(if message.is_empty() {
        format!(
            "the exec failed ({})",
            status.reason.as_deref().unwrap_or("no reason given")
        )
    } else {
        message.to_string()
    })
}

fn code_in_message(message: &str) -> Option<i32> {
    const MARK: &str = "exit status ";
    let at = message.rfind(MARK)? + MARK.len();
    let digits: String = message[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{StatusCause, StatusDetails};

    fn failure(message: &str, reason: &str, causes: Vec<StatusCause>) -> Status {
        Status {
            status: Some("Failure".into()),
            message: Some(message.into()),
            reason: Some(reason.into()),
            details: (!causes.is_empty()).then(|| StatusDetails {
                causes: Some(causes),
                ..StatusDetails::default()
            }),
            ..Status::default()
        }
    }

    #[test]
    fn success_is_zero() {
        let ok = Status {
            status: Some("Success".into()),
            ..Status::default()
        };
        assert_eq!(exit_code(Some(&ok)), Ok(0));
    }

    #[test]
    fn kubelet_exit_code_cause() {
        let s = failure(
            "command terminated with non-zero exit code: error executing command [celld deploy], exit code 3",
            "NonZeroExitCode",
            vec![StatusCause {
                reason: Some("ExitCode".into()),
                message: Some("3".into()),
                field: None,
            }],
        );
        assert_eq!(exit_code(Some(&s)), Ok(3));
    }

    #[test]
    fn kwok_generic_message() {
        let s = failure(
            "cmd wait: celld deploy src --bucket s3://b/p: exit status 42",
            "InternalError",
            vec![],
        );
        assert_eq!(exit_code(Some(&s)), Ok(42));
    }

    #[test]
    fn command_missing_is_an_error() {
        let s = failure(
            "cmd start: celld deploy: exec: \"celld\": executable file not found in $PATH",
            "InternalError",
            vec![],
        );
        let err = exit_code(Some(&s)).unwrap_err();
        assert!(err.contains("executable file not found"), "{err}");
        assert!(exit_code(None).is_err());
    }
}
