//! The Worker source of an `--image` deploy, checked in the deploy pod before celld deploy
//! reads it: a symbolic link that leads outside it (to `/proc/self/environ`, or up past its
//! top) would have celld deploy read the pod's own files and credentials. The check is
//! celld-api's `outside_links` ([`publish::LINKS`]), the one the operator's deploy Job runs.

use super::job::CONTAINER;
use crate::cluster::exec::{self, Sink, Spec};
use crate::error::{Error, Result};
use celld_api::contract::publish;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

/// The tools the check runs, besides sh.
pub const TOOLS: [&str; 2] = ["find", "readlink"];

/// The check, as an exec command on the directory `dir`.
pub fn command(dir: &str) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("{}\noutside_links \"$1\"", publish::LINKS),
        "celld-links".into(),
        dir.into(),
    ]
}

/// What the check's `stdout` says of the source in `dir` of `image`: the first link out of it
/// refuses the deploy, naming it.
pub fn verdict(stdout: &str, dir: &str, image: &str) -> Result<()> {
    let Some((name, target)) = stdout.lines().next().and_then(|l| l.split_once(" -> ")) else {
        return Ok(());
    };
    Err(Error::Deploy(format!(
        "{dir}/{name} in the image {image} is a symbolic link to {target}, outside the Worker source: celld deploy would read it in the deploy pod, where it reaches the pod's own files and credentials; copy what it points to into the source when building the image, or remove the link"
    )))
}

/// Runs the check on `dir` in `pod` (which runs `image`).
pub async fn check(pods: &Api<Pod>, pod: &str, dir: &str, image: &str) -> Result<()> {
    let done = exec::run(
        pods,
        pod,
        Spec {
            command: command(dir),
            container: CONTAINER.into(),
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            stdin: None,
        },
    )
    .await?;
    verdict(&String::from_utf8_lossy(&done.stdout), dir, image)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::process::Command;

    /// The check run here, on a directory of this machine, as the deploy pod runs it.
    fn run_here(dir: &std::path::Path) -> String {
        let argv = command(&dir.display().to_string());
        let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn a_link_out_of_the_source_refuses_the_deploy_by_name() {
        let d = tempfile::tempdir().unwrap();
        let app = d.path().join("app");
        std::fs::create_dir_all(app.join("src")).unwrap();
        std::fs::write(app.join("src/index.js"), "x").unwrap();
        symlink("index.js", app.join("src/main.js")).unwrap();
        assert_eq!(run_here(&app), "", "a link inside passes");
        for target in ["/proc/self/environ", "../../outside.js"] {
            let _ = std::fs::remove_file(app.join("src/leak.js"));
            symlink(target, app.join("src/leak.js")).unwrap();
            let said = run_here(&app);
            assert_eq!(said, format!("src/leak.js -> {target}\n"));
            let err = verdict(&said, "/app", "web-src:1").unwrap_err().to_string();
            assert!(
                err.contains(&format!("/app/src/leak.js in the image web-src:1 is a symbolic link to {target}, outside the Worker source")),
                "{err}"
            );
        }
        assert!(verdict("", "/app", "i").is_ok());
    }
}
