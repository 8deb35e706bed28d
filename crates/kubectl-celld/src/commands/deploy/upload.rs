//! Streaming the packed directory into the deploy pod: `tar` reads exactly the archive's length
//! (so no end-of-input is needed, which not every exec server delivers) and extracts it into
//! the upload directory, relative to the container's working directory.

use super::archive::Archive;
use crate::cluster::exec::{self, Feeder, Sink, Spec};
use crate::error::{Error, Result};
use crate::pod::job::{CONTAINER, UPLOAD_DIR};
use crate::text::progress::Progress;
use futures::FutureExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

const CHUNK: usize = 64 * 1024;

/// The command that receives `len` bytes of tar on stdin into a fresh [`UPLOAD_DIR`].
pub fn extract_command(len: usize) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!(
            "rm -rf {UPLOAD_DIR} && mkdir -p {UPLOAD_DIR} && head -c {len} | tar -x -o -f - -C {UPLOAD_DIR}"
        ),
    ]
}

fn feeder(archive: Arc<Archive>, mut progress: Progress) -> Feeder {
    Box::new(move |mut w| {
        async move {
            let total = archive.bytes.len() as u64;
            let mut sent = 0u64;
            progress.upload(0, total);
            for chunk in archive.bytes.chunks(CHUNK) {
                w.write_all(chunk).await.map_err(|e| {
                    Error::Deploy(format!("the upload stream to the deploy pod broke: {e}"))
                })?;
                sent += chunk.len() as u64;
                progress.upload(sent, total);
            }
            w.flush().await.map_err(|e| {
                Error::Deploy(format!("the upload stream to the deploy pod broke: {e}"))
            })?;
            Ok(w)
        }
        .boxed()
    })
}

/// Uploads `archive` into `pod` and checks that it was extracted; `progress` counts the bytes
/// sent. The archive is shared: a fan-out uploads the same one into every fleet's pod.
pub async fn upload(
    pods: &Api<Pod>,
    pod: &str,
    archive: Arc<Archive>,
    progress: Progress,
) -> Result<()> {
    let len = archive.bytes.len();
    let done = exec::run(
        pods,
        pod,
        Spec {
            command: extract_command(len),
            container: CONTAINER.into(),
            stdout: Sink::Capture,
            stderr: Sink::Capture,
            stdin: Some(feeder(archive, progress)),
        },
    )
    .await?;
    if done.code != 0 {
        return Err(Error::Deploy(format!(
            "extracting the upload in the deploy pod failed (exit code {}): {}; the deployer image needs sh, head and tar",
            done.code,
            String::from_utf8_lossy(&done.stderr).trim()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extract_reads_exactly_the_archive_into_a_relative_dir() {
        insta::assert_debug_snapshot!(extract_command(10240), @r#"
        [
            "sh",
            "-c",
            "rm -rf src && mkdir -p src && head -c 10240 | tar -x -o -f - -C src",
        ]
        "#);
    }
}
