//! The deploy Job's script: how the operator publishes a fleet's source without exec into a pod.
//!
//! The Job's one container runs [`SCRIPT`] (POSIX sh) with the exact `celld deploy` command as
//! its arguments ([`command`]). When [`ARTIFACT_URL_ENV`] is set, the script first downloads that
//! tar.gz, checks it against [`ARTIFACT_DIGEST_ENV`] and extracts it into
//! `$CELLD_WORK/src` ([`source_dir`]), the directory the operator points `celld deploy` at. The
//! command's output streams to the container's log. The script then writes one JSON object, a
//! [`PublishResult`], to the termination log, which the kubelet copies into the container's
//! `state.terminated.message`: the operator reads the outcome from the pod's status alone.
//!
//! ```json
//! {"outcome":"Published","attempts":1}
//! {"outcome":"Failed","step":"deploy","exitCode":3,"message":"<the command's last lines>","attempts":1}
//! ```
//!
//! A `celld deploy` that fails in a way its output says may pass when run again (its write may
//! have committed, the store asked to slow down) runs again, as a whole, under the rule of
//! [`super::deploy_retry`]; `attempts` counts the runs (a result of an older script has none).
//!
//! The deployer image (Debian bookworm-slim with curl) has everything the script runs: sh,
//! curl, sha256sum, tar, gzip, tail, tr, sed and mktemp.

use serde::{Deserialize, Serialize};

/// The script (POSIX sh). Run it as `sh -c SCRIPT celld-publish celld deploy DIR --bucket ...`:
/// the arguments after [`SCRIPT_NAME`] are the command it runs.
pub const SCRIPT: &str = concat!(include_str!("links.sh"), include_str!("publish.sh"));

/// The shell function `outside_links DIR` (POSIX sh), which prints each symbolic link under DIR
/// that leads outside it as `NAME -> TARGET`: the deploy Job's script refuses such a source, and
/// `kubectl celld deploy --image` runs it in its deploy pod.
pub const LINKS: &str = include_str!("links.sh");

/// The script's name (`$0`) in its command line and in what it logs.
pub const SCRIPT_NAME: &str = "celld-publish";

/// Environment variable: the URL of the source's tar.gz (http or https). Optional: without it
/// the command runs on a directory that is already there (an image volume, for instance).
pub const ARTIFACT_URL_ENV: &str = "CELLD_ARTIFACT_URL";

/// Environment variable: the artifact's digest, `sha256:` and 64 lowercase hex digits. Required
/// with [`ARTIFACT_URL_ENV`]; the script refuses any other form.
pub const ARTIFACT_DIGEST_ENV: &str = "CELLD_ARTIFACT_DIGEST";

/// Environment variable: the writable directory the artifact is downloaded to and extracted
/// under (default [`DEFAULT_WORK`]); mount a writable volume (an `emptyDir`) there.
pub const WORK_ENV: &str = "CELLD_WORK";

/// The work directory when [`WORK_ENV`] is not set.
pub const DEFAULT_WORK: &str = "/work";

/// Environment variable: where the script writes its result (default
/// [`DEFAULT_TERMINATION_LOG`]); tests point it at a file of their own.
pub const TERMINATION_LOG_ENV: &str = "CELLD_TERMINATION_LOG";

/// The container's termination log: the kubelet's default `terminationMessagePath`.
pub const DEFAULT_TERMINATION_LOG: &str = "/dev/termination-log";

/// The most the kubelet reads of a termination message; the script's result always fits.
pub const MAX_RESULT_BYTES: usize = 4096;

/// Where the artifact is extracted: `src` under the work directory `work`. A deploy command
/// points at this directory or at a project directory below it.
pub fn source_dir(work: &str) -> String {
    format!("{}/src", work.trim_end_matches('/'))
}

/// The container command that runs the script with `deploy` (`celld deploy DIR --bucket ...`) as
/// its arguments: `sh -c SCRIPT celld-publish <deploy...>`.
pub fn command<I, S>(deploy: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    ["sh", "-c", SCRIPT, SCRIPT_NAME]
        .into_iter()
        .map(str::to_owned)
        .chain(deploy.into_iter().map(Into::into))
        .collect()
}

/// How the deploy ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// `celld deploy` exited 0: the version is in the bucket and the pointer written.
    Published,
    /// A step failed; the result says which.
    Failed,
}

/// The step of the script that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Downloading the artifact (curl), or the artifact settings are incomplete.
    Download,
    /// The digest is malformed, or the artifact's digest is not the expected one.
    Digest,
    /// The artifact is not a tar.gz, or has a member outside its directory.
    Extract,
    /// The Worker source has a symbolic link that leads outside it (to `/proc/self/environ`,
    /// or up past its top): celld deploy would read it in the deploy pod.
    Links,
    /// The command (`celld deploy`) exited non-zero, or there was none.
    Deploy,
}

/// The script's result, as written to the termination log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishResult {
    /// Published or Failed.
    pub outcome: Outcome,
    /// The step that failed (only when Failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<Step>,
    /// The script's exit code: the failed command's (`celld deploy`'s own for [`Step::Deploy`]),
    /// 1 for a refused digest or artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// What failed: for [`Step::Deploy`] the command's last lines of output; for the other steps
    /// a sentence saying what went wrong, followed by the failed tool's last lines. At most
    /// about 3 KiB: the start of a long output is cut (`...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How many times `celld deploy` ran (see [`super::deploy_retry`]); none when it never ran,
    /// or in the result of a script older than the retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
}

/// A termination message that is not the script's result.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PublishResultError {
    /// The container ended without a termination message.
    #[error(
        "the deploy container ended without a result in its termination message: it was stopped \
         before the script finished, or ran another command; see the pod's logs"
    )]
    Empty,
    /// The message is not the JSON the script writes.
    #[error(
        "the deploy container's termination message is not the publish script's result \
         ({reason}): {excerpt:?}; the container ran another command or the image has another \
         script; see the pod's logs"
    )]
    NotResult {
        /// Why it was not understood.
        reason: String,
        /// The start of the message.
        excerpt: String,
    },
}

/// The longest excerpt of a message that is not a result.
const EXCERPT_CHARS: usize = 120;

impl PublishResult {
    /// Reads the result from a container's termination message (`state.terminated.message`).
    pub fn read(termination_message: &str) -> Result<PublishResult, PublishResultError> {
        let text = termination_message.trim();
        if text.is_empty() {
            return Err(PublishResultError::Empty);
        }
        serde_json::from_str(text).map_err(|e| {
            let mut excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
            if text.chars().nth(EXCERPT_CHARS).is_some() {
                excerpt.push_str("...");
            }
            PublishResultError::NotResult {
                reason: e.to_string(),
                excerpt,
            }
        })
    }

    /// Whether the source was published.
    pub fn is_published(&self) -> bool {
        self.outcome == Outcome::Published
    }

    /// One line for a status condition: what happened, with the message's lines joined by
    /// ` | `.
    pub fn describe(&self) -> String {
        let message = self.message.as_deref().map(one_line).unwrap_or_default();
        let mut code = self
            .exit_code
            .map(|c| format!(" with {c}"))
            .unwrap_or_default();
        let retried = self.attempts.filter(|n| *n > 1);
        if let Some(n) = retried {
            code.push_str(&format!(" after {n} attempts"));
        }
        match (self.outcome, self.step) {
            (Outcome::Published, _) => match retried {
                Some(n) => format!("celld deploy published the source at attempt {n}"),
                None => "celld deploy published the source".to_owned(),
            },
            (Outcome::Failed, Some(Step::Deploy)) if message.is_empty() => {
                format!("celld deploy exited{code} without output")
            }
            (Outcome::Failed, Some(Step::Deploy)) => {
                format!("celld deploy exited{code}: {message}")
            }
            (Outcome::Failed, Some(_)) if !message.is_empty() => message,
            (Outcome::Failed, Some(step)) => format!("the {} step failed{code}", step_name(step)),
            (Outcome::Failed, None) if message.is_empty() => format!("the deploy failed{code}"),
            (Outcome::Failed, None) => format!("the deploy failed{code}: {message}"),
        }
    }
}

fn step_name(step: Step) -> &'static str {
    match step {
        Step::Download => "download",
        Step::Digest => "digest",
        Step::Extract => "extract",
        Step::Links => "links",
        Step::Deploy => "deploy",
    }
}

/// The non-blank lines of `text`, trimmed and joined by ` | `.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_published_result() {
        let result = PublishResult::read("{\"outcome\":\"Published\"}\n").unwrap();
        assert!(result.is_published());
        assert_eq!(result.step, None);
        insta::assert_snapshot!(result.describe(), @"celld deploy published the source");
    }

    #[test]
    fn reads_a_failed_deploy_and_describes_it_on_one_line() {
        let result = PublishResult::read(
            r#"{"outcome":"Failed","step":"deploy","exitCode":1,"message":"...building\n✘ [ERROR] Could not resolve \"./missing\"\n\n    src/index.ts:1:7:"}"#,
        )
        .unwrap();
        assert_eq!(result.outcome, Outcome::Failed);
        assert_eq!(result.step, Some(Step::Deploy));
        assert_eq!(result.exit_code, Some(1));
        insta::assert_snapshot!(result.describe(), @r#"celld deploy exited with 1: ...building | ✘ [ERROR] Could not resolve "./missing" | src/index.ts:1:7:"#);
    }

    #[test]
    fn reads_the_attempts_and_a_result_without_them() {
        let retried = PublishResult::read(r#"{"outcome":"Published","attempts":3}"#).unwrap();
        assert_eq!(retried.attempts, Some(3));
        insta::assert_snapshot!(retried.describe(), @"celld deploy published the source at attempt 3");
        let once = PublishResult::read(r#"{"outcome":"Published","attempts":1}"#).unwrap();
        insta::assert_snapshot!(once.describe(), @"celld deploy published the source");
        let old = PublishResult::read(r#"{"outcome":"Published"}"#).unwrap();
        assert_eq!(
            old.attempts, None,
            "a result of an older script still reads"
        );
        let exhausted = PublishResult::read(
            r#"{"outcome":"Failed","step":"deploy","exitCode":1,"message":"writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed","attempts":4}"#,
        )
        .unwrap();
        insta::assert_snapshot!(exhausted.describe(), @"celld deploy exited with 1 after 4 attempts: writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed");
        assert_eq!(
            serde_json::to_string(&exhausted).unwrap(),
            r#"{"outcome":"Failed","step":"deploy","exitCode":1,"message":"writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed","attempts":4}"#
        );
    }

    #[test]
    fn describes_every_step() {
        let failed = |step, code, message: &str| PublishResult {
            outcome: Outcome::Failed,
            step,
            exit_code: code,
            message: (!message.is_empty()).then(|| message.to_owned()),
            attempts: None,
        };
        let lines: Vec<String> = [
            failed(
                Some(Step::Digest),
                Some(1),
                "the artifact's digest is sha256:aaaa but the source says sha256:bbbb (https://example.com/a.tgz)",
            ),
            failed(
                Some(Step::Download),
                Some(22),
                "downloading https://example.com/a.tgz failed:\ncurl: (22) The requested URL returned error: 404",
            ),
            failed(
                Some(Step::Extract),
                Some(1),
                "the artifact has a member outside its directory: ../etc/passwd",
            ),
            failed(Some(Step::Extract), Some(2), ""),
            failed(Some(Step::Deploy), Some(137), ""),
            failed(None, None, ""),
            failed(None, Some(1), "something\nelse"),
        ]
        .iter()
        .map(PublishResult::describe)
        .collect();
        insta::assert_snapshot!(lines.join("\n"), @r"
        the artifact's digest is sha256:aaaa but the source says sha256:bbbb (https://example.com/a.tgz)
        downloading https://example.com/a.tgz failed: | curl: (22) The requested URL returned error: 404
        the artifact has a member outside its directory: ../etc/passwd
        the extract step failed with 2
        celld deploy exited with 137 without output
        the deploy failed
        the deploy failed with 1: something | else
        ");
    }

    #[test]
    fn round_trips_the_json_the_script_writes() {
        let result = PublishResult {
            outcome: Outcome::Failed,
            step: Some(Step::Digest),
            exit_code: Some(1),
            message: Some("m".to_owned()),
            attempts: None,
        };
        let json = serde_json::to_string(&result).unwrap();
        assert_eq!(
            json,
            r#"{"outcome":"Failed","step":"digest","exitCode":1,"message":"m"}"#
        );
        assert_eq!(PublishResult::read(&json).unwrap(), result);
        let published =
            serde_json::to_string(&PublishResult::read(r#"{"outcome":"Published"}"#).unwrap())
                .unwrap();
        assert_eq!(published, r#"{"outcome":"Published"}"#);
    }

    #[test]
    fn refuses_what_is_not_a_result() {
        assert_eq!(PublishResult::read(" \n"), Err(PublishResultError::Empty));
        let err = PublishResult::read("Error: exec: \"sh\": executable file not found in $PATH")
            .unwrap_err();
        insta::assert_snapshot!(err, @r#"the deploy container's termination message is not the publish script's result (expected value at line 1 column 1): "Error: exec: \"sh\": executable file not found in $PATH"; the container ran another command or the image has another script; see the pod's logs"#);
        let long = format!(
            "{{\"outcome\":\"Unknown\",\"message\":\"{}\"}}",
            "x".repeat(500)
        );
        let PublishResultError::NotResult { excerpt, reason } =
            PublishResult::read(&long).unwrap_err()
        else {
            panic!("not NotResult");
        };
        assert!(reason.contains("unknown variant `Unknown`"), "{reason}");
        assert_eq!(excerpt.chars().count(), EXCERPT_CHARS + 3);
        assert!(excerpt.ends_with("..."));
    }

    #[test]
    fn the_command_runs_the_script_with_the_deploy_command() {
        let command = command(["celld", "deploy", "/work/src/app", "--bucket", "s3://b/p"]);
        assert_eq!(command[..2], ["sh", "-c"]);
        assert_eq!(command[2], SCRIPT);
        assert_eq!(
            command[3..],
            [
                SCRIPT_NAME,
                "celld",
                "deploy",
                "/work/src/app",
                "--bucket",
                "s3://b/p"
            ]
        );
        assert_eq!(source_dir(DEFAULT_WORK), "/work/src");
        assert_eq!(source_dir("/tmp/w/"), "/tmp/w/src");
    }
}
