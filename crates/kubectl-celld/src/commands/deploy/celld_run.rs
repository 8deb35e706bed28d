//! `celld deploy` run in the deploy pod: again, after a wait, while a failed attempt's output
//! says it may pass then ([`deploy_retry`]), and what the plugin says of its last attempt.

use crate::cluster::exec::{self, Finished, Sink, Spec};
use crate::error::Result;
use crate::pod::job::CONTAINER;
use crate::text::progress::Progress;
use celld_api::contract::deploy_retry;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

/// How the tools in the deploy pod report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// One fleet: celld's output streamed live to stdout and stderr, the reload report on
    /// stdout.
    Live,
    /// One fleet of a fan-out: celld's output and the reload report kept, then written to stderr
    /// as one block with the fleet's prefix; the version published read back from the fleet's
    /// pointer (with `celld-bucket`, when the image has it).
    PerFleet,
}

/// Runs `celld deploy` in `pod`, its output streamed live or kept (see [`Output`]), and again,
/// after a wait, while a failed attempt's output says it may pass then ([`deploy_retry`]: its
/// write may have committed, the store asked to slow down; the command is idempotent), each
/// retry said in `progress`. Returns the last attempt and how many ran. A dry run is retried
/// the same way, never more.
pub async fn run_celld(
    pods: &Api<Pod>,
    pod: &str,
    command: Vec<String>,
    output: Output,
    progress: &mut Progress,
) -> Result<(Finished, u32)> {
    let mut attempt = 1;
    loop {
        let done = run_celld_once(pods, pod, command.clone(), output).await?;
        if output == Output::PerFleet {
            progress.block(&String::from_utf8_lossy(&done.stdout));
            progress.block(&String::from_utf8_lossy(&done.stderr));
        }
        if done.code == 0 || attempt >= deploy_retry::ATTEMPTS {
            return Ok((done, attempt));
        }
        let Some(reason) = retry_reason(&done) else {
            return Ok((done, attempt));
        };
        attempt += 1;
        progress.note(&format!(
            "retrying celld deploy (attempt {attempt} of {}): {reason}",
            deploy_retry::ATTEMPTS
        ));
        if let Some(wait) = deploy_retry::backoff(attempt) {
            tokio::time::sleep(wait).await;
        }
    }
}

/// One run of `celld deploy` in `pod`; the output is kept even when streamed live.
async fn run_celld_once(
    pods: &Api<Pod>,
    pod: &str,
    command: Vec<String>,
    output: Output,
) -> Result<Finished> {
    let (stdout, stderr) = match output {
        Output::Live => (Sink::StdoutKept, Sink::StderrKept),
        Output::PerFleet => (Sink::Capture, Sink::Capture),
    };
    let spec = Spec {
        stdout,
        stderr,
        ..Spec::captured(CONTAINER, command)
    };
    exec::run(pods, pod, spec).await
}

/// Why the failed attempt `done` may pass when run again: the line of its stderr, else of its
/// stdout, that says so ([`deploy_retry::reason`]).
fn retry_reason(done: &Finished) -> Option<String> {
    [&done.stderr, &done.stdout].iter().find_map(|stream| {
        deploy_retry::reason(&String::from_utf8_lossy(stream)).map(str::to_owned)
    })
}

/// What the plugin says when `celld deploy` failed at its last attempt, `attempts` in all.
pub fn failed_note(done: &Finished, attempts: u32) -> String {
    match (attempts, retry_reason(done)) {
        (1, _) => format!(
            "celld deploy failed with exit code {}; nothing was made live",
            done.code
        ),
        (_, Some(reason)) => format!(
            "celld deploy failed with exit code {} after {attempts} attempts, the last with: {reason}; its last write may have committed, so check the fleet's version with kubectl celld history and deploy again once the bucket answers",
            done.code
        ),
        (_, None) => format!(
            "celld deploy failed with exit code {} after {attempts} attempts, the last with: {}; nothing was made live by the last attempt",
            done.code,
            last_line(done)
        ),
    }
}

/// The last line a failed `celld deploy` wrote (on stderr, else stdout): its reason, for the
/// table of a fan-out.
pub fn last_line(done: &Finished) -> String {
    [&done.stderr, &done.stdout]
        .iter()
        .find_map(|stream| {
            String::from_utf8_lossy(stream)
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_string)
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_celld_deploy_is_told_by_its_last_line() {
        let done = Finished {
            code: 1,
            stdout: b"celld deploy: bundling src\n".to_vec(),
            stderr: b"esbuild: 2 modules\nerror: PUT deploy/x: 403 InvalidAccessKeyId\n\n".to_vec(),
        };
        assert_eq!(
            last_line(&done),
            "error: PUT deploy/x: 403 InvalidAccessKeyId"
        );
        let quiet = Finished {
            code: 1,
            stdout: b"only stdout\n".to_vec(),
            stderr: Vec::new(),
        };
        assert_eq!(last_line(&quiet), "only stdout");
        assert_eq!(last_line(&Finished::default()), "");
    }

    #[test]
    fn a_retry_is_told_by_the_line_that_makes_it_retryable() {
        let slow = Finished {
            code: 1,
            stdout: b"Uploaded 2 modules\n".to_vec(),
            stderr: b"Error: writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed\n".to_vec(),
        };
        let reason = "Error: writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed";
        assert_eq!(retry_reason(&slow).as_deref(), Some(reason));
        assert_eq!(
            failed_note(&slow, 4),
            format!(
                "celld deploy failed with exit code 1 after 4 attempts, the last with: {reason}; its last write may have committed, so check the fleet's version with kubectl celld history and deploy again once the bucket answers"
            )
        );
        assert_eq!(
            failed_note(&slow, 1),
            "celld deploy failed with exit code 1; nothing was made live"
        );
        let bundling = Finished {
            code: 1,
            stdout: Vec::new(),
            stderr: b"X [ERROR] Could not resolve \"./missing\"\n".to_vec(),
        };
        assert_eq!(retry_reason(&bundling), None);
        assert_eq!(
            failed_note(&bundling, 2),
            "celld deploy failed with exit code 1 after 2 attempts, the last with: X [ERROR] Could not resolve \"./missing\"; nothing was made live by the last attempt"
        );
    }
}
