//! Checking the deploy pod before using it: the tools each step needs are on its PATH and the
//! working directory is writable, so a wrong image fails before anything is uploaded or
//! published, with a message naming what is missing.

use super::job::CONTAINER;
use crate::error::{Error, Result};
use crate::exec::{self, Sink, Spec};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

/// Exit code of the check when tools are missing.
const MISSING: i32 = 3;
/// Exit code of the check when the working directory is not writable.
const READ_ONLY: i32 = 4;

const SCRIPT: &str = r#"missing=
for t in "$@"; do command -v "$t" >/dev/null 2>&1 || missing="$missing $t"; done
if [ -n "$missing" ]; then echo "$missing"; exit 3; fi
touch .celld-preflight 2>/dev/null && rm -f .celld-preflight || exit 4"#;

/// The tools the deploy needs: celld always, head and tar to receive an upload, curl to
/// reload the nodes.
pub fn tools(upload: bool, reload: bool) -> Vec<&'static str> {
    let mut t = vec!["celld"];
    if upload {
        t.extend(["head", "tar"]);
    }
    if reload {
        t.push("curl");
    }
    t
}

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

/// Runs the check in `pod`, which runs `image`.
pub async fn check(pods: &Api<Pod>, pod: &str, image: &str, tools: &[&str]) -> Result<()> {
    let done = exec::run(
        pods,
        pod,
        Spec {
            command: command(tools),
            container: CONTAINER.into(),
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            stdin: None,
        },
    )
    .await?;
    let out = String::from_utf8_lossy(&done.stdout);
    match done.code {
        0 => Ok(()),
        MISSING => Err(Error::Deploy(format!(
            "the deploy image {image} lacks{}: deploying needs celld (and esbuild), receiving a directory needs head and tar, reloading the nodes needs curl; use an image that has them (--deployer-image, or --image for source baked in at /app){}",
            out.trim_end(),
            if tools.contains(&"curl") {
                ", or skip the reload with --no-reload"
            } else {
                ""
            }
        ))),
        READ_ONLY => Err(Error::Deploy(format!(
            "the deploy pod's working directory is not writable (image {image}): the Job mounts an emptyDir there; check PodSecurity or admission policies that change the pod"
        ))),
        code => Err(Error::Deploy(format!(
            "checking the deploy pod failed (exit code {code}): {}",
            String::from_utf8_lossy(&done.stderr).trim()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_per_mode() {
        assert_eq!(tools(true, true), vec!["celld", "head", "tar", "curl"]);
        assert_eq!(tools(false, false), vec!["celld"]);
    }

    #[test]
    fn script_reports_missing_tools() {
        let out = std::process::Command::new("sh")
            .args(command(&["sh", "no-such-tool-xyz"]).iter().skip(1))
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(MISSING));
        assert_eq!(String::from_utf8_lossy(&out.stdout), " no-such-tool-xyz\n");
    }
}
