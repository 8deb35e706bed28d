//! Checking the deploy pod before using it: the tools each step needs are on its PATH and the
//! working directory is writable, so a wrong image fails before anything is uploaded or
//! published, with a message naming what is missing.

use super::job::CONTAINER;
use crate::cluster::exec::{self, Sink, Spec};
use crate::error::{Error, Result};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

/// Exit code of the check when the working directory is not writable.
const READ_ONLY: i32 = 4;

/// Prints `missing: NAME...` (the tools not on PATH), then checks the working directory.
const SCRIPT: &str = r#"missing=
for t in "$@"; do command -v "$t" >/dev/null 2>&1 || missing="$missing $t"; done
echo "missing:$missing"
touch .celld-preflight 2>/dev/null && rm -f .celld-preflight || exit 4"#;

/// The tools a deploy cannot do without: celld always, head and tar to receive an upload.
pub fn required(upload: bool) -> Vec<&'static str> {
    let mut t = vec!["celld"];
    if upload {
        t.extend(["head", "tar"]);
    }
    t
}

/// The tool the reload needs. Without it the deploy still runs; the nodes then adopt the new
/// version at their next poll.
pub const RELOAD_TOOL: &str = "curl";

/// The check, as an exec command.
pub fn command(tools: &[&str]) -> Vec<String> {
    let mut cmd = vec![
        "sh".to_string(),
        "-c".to_string(),
        SCRIPT.to_string(),
        "celld-preflight".to_string(),
    ];
    cmd.extend(tools.iter().map(|t| t.to_string()));
    cmd
}

/// The tools the check's output names as missing.
pub fn missing(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("missing:"))
        .map(|rest| rest.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Runs the check in `pod` (which runs `image`): fails when a `required` tool is missing or the
/// working directory is not writable; returns the `optional` tools that are missing.
pub async fn check(
    pods: &Api<Pod>,
    pod: &str,
    image: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<Vec<String>> {
    let all: Vec<&str> = required.iter().chain(optional).copied().collect();
    let done = exec::run(
        pods,
        pod,
        Spec {
            command: command(&all),
            container: CONTAINER.into(),
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            stdin: None,
        },
    )
    .await?;
    match done.code {
        0 => {}
        READ_ONLY => {
            return Err(Error::Deploy(format!(
                "the deploy pod's working directory is not writable (image {image}): the Job mounts an emptyDir there; check PodSecurity or admission policies that change the pod"
            )));
        }
        code => {
            return Err(Error::Deploy(format!(
                "checking the deploy pod failed (exit code {code}): {}; the image needs sh",
                String::from_utf8_lossy(&done.stderr).trim()
            )));
        }
    }
    let missing = missing(&String::from_utf8_lossy(&done.stdout));
    let lacking: Vec<&str> = required
        .iter()
        .copied()
        .filter(|t| missing.iter().any(|m| m == t))
        .collect();
    if !lacking.is_empty() {
        return Err(Error::Deploy(format!(
            "the deploy image {image} lacks {}: deploying needs celld (and esbuild), receiving a directory head and tar, --vars-from-secret celld-bucket (and tar with --image), history and rollback curl; use an image that has them (--deployer-image, or --image for source baked in at /app)",
            lacking.join(", ")
        )));
    }
    Ok(missing
        .into_iter()
        .filter(|m| optional.contains(&m.as_str()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_tools_per_mode() {
        assert_eq!(required(true), vec!["celld", "head", "tar"]);
        assert_eq!(required(false), vec!["celld"]);
    }

    #[test]
    fn script_reports_missing_tools() {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("sh")
            .args(
                command(&["sh", "no-such-tool-xyz", "no-such-tool-abc"])
                    .iter()
                    .skip(1),
            )
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            missing(&String::from_utf8_lossy(&out.stdout)),
            vec!["no-such-tool-xyz", "no-such-tool-abc"]
        );
        assert!(missing("missing:\n").is_empty());
    }
}
