//! The OCI registry of the local control plane, and Flux OCI artifacts pushed to it.

use std::path::Path;
use std::process::Stdio;

use tokio::process::Command;

use super::settings::{TOOL_TIMEOUT, read_env_file};
use crate::error::{Error, Result};
use crate::paths;

/// The OCI registry of the local control plane: the OCI distribution API over plain HTTP on a
/// loopback port, in memory (testenv/go/oci-registry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRegistry {
    /// `127.0.0.1:<port>`.
    pub addr: String,
}

impl OciRegistry {
    /// Reads `.testenv/oci.env`; fails with [`Error::NotServed`] when the control plane does not
    /// run the registry.
    pub fn load() -> Result<Self> {
        Self::from_file(&paths::oci_env())
    }

    /// Reads a `KEY=value` env file with `OCI_REGISTRY`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let get = read_env_file(path, "OCI registry")?;
        Ok(OciRegistry {
            addr: get("OCI_REGISTRY")?,
        })
    }

    /// `oci://127.0.0.1:<port>/<repository>`, the URL an `OCIRepository` follows.
    pub fn url(&self, repository: &str) -> String {
        format!("oci://{}/{repository}", self.addr)
    }

    /// Pushes the files and directories under `dir` as a Flux OCI artifact (what `flux push
    /// artifact` writes: one `application/vnd.cncf.flux.content.v1.tar+gzip` layer, config
    /// `application/vnd.cncf.flux.config.v1+json`) to `repository:tag`, with `.testenv/bin/oci-registry
    /// push`; returns the manifest's digest (`sha256:<hex>`). The same tree gives the same layer.
    pub async fn push_artifact(&self, dir: &Path, repository: &str, tag: &str) -> Result<String> {
        let tool = paths::oci_registry();
        let target = format!("{}/{repository}:{tag}", self.addr);
        let shown = format!(
            "{} push -dir {} -ref {target}",
            tool.display(),
            dir.display()
        );
        let failed = |message: String| Error::Tool {
            command: shown.clone(),
            message,
        };
        let run = Command::new(&tool)
            .arg("push")
            .arg("-dir")
            .arg(dir)
            .arg("-ref")
            .arg(&target)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(TOOL_TIMEOUT, run)
            .await
            .map_err(|_| failed(format!("still running after {TOOL_TIMEOUT:?} (killed)")))?
            .map_err(|e| {
                failed(format!(
                    "cannot run it ({e}); is the local control plane up? run `make cluster-up`"
                ))
            })?;
        if !output.status.success() {
            return Err(failed(format!(
                "exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let digest = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if digest.starts_with("sha256:") {
            Ok(digest)
        } else {
            Err(failed(format!("printed {digest:?}, not a digest")))
        }
    }
}
