//! Flux's source-controller makes artifacts of sources on the local S3 server (`Bucket`) and OCI
//! registry (`OCIRepository`), and serves them on a loopback URL this process can GET: the
//! `status.artifact` (url, digest, revision) a CelldFleet that follows a Flux source reads.

use std::collections::BTreeMap;
use std::path::Path;

use celld_testkit::{ARTIFACT_TIMEOUT, FluxArtifact, TestEnv, unique_name, unpack_tar_gz};
use sha2::{Digest, Sha256};

use crate::TestResult;

/// A small Worker project: what a CelldFleet would deploy from a Flux source.
const WORKER: [(&str, &str); 2] = [
    (
        "wrangler.jsonc",
        "{\n  // a Worker\n  \"name\": \"hello\",\n  \"main\": \"src/index.js\"\n}\n",
    ),
    (
        "src/index.js",
        "export default { fetch() { return new Response(\"hello\"); } };\n",
    ),
];

/// Downloads the artifact and checks that its bytes have the digest source-controller
/// published; returns its files (as text, so a failure shows them).
async fn download_and_verify(
    artifact: &FluxArtifact,
    storage_addr: &str,
) -> Result<BTreeMap<String, String>, Box<dyn std::error::Error>> {
    assert!(
        artifact.url.starts_with(&format!("http://{storage_addr}/")),
        "the artifact URL points at source-controller's loopback artifact server: {artifact:?}"
    );
    let bytes = artifact.download().await?;
    assert_eq!(
        format!("sha256:{}", hex::encode(Sha256::digest(&bytes))),
        artifact.digest,
        "the sha256 of the downloaded artifact is its status.artifact.digest"
    );
    if let Some(size) = artifact.size {
        assert_eq!(size, bytes.len() as u64, "status.artifact.size");
    }
    Ok(unpack_tar_gz(&bytes)?
        .into_iter()
        .map(|(path, content)| (path, String::from_utf8_lossy(&content).into_owned()))
        .collect())
}

fn expected(prefix: &str) -> BTreeMap<String, String> {
    WORKER
        .iter()
        .map(|(path, body)| (format!("{prefix}{path}"), (*body).to_owned()))
        .collect()
}

fn write_tree(dir: &Path) -> TestResult {
    for (path, body) in WORKER {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(file, body)?;
    }
    Ok(())
}

#[tokio::test]
async fn a_bucket_on_the_s3_server_becomes_an_artifact_with_its_objects() -> TestResult {
    let env = TestEnv::new("flux-bucket").await?;
    let flux = env.flux()?;
    let s3 = env.s3()?;
    let prefix = s3.unique_prefix("flux-bucket");
    for (path, body) in WORKER {
        s3.put_object(&format!("{prefix}{path}"), body.as_bytes().to_vec())
            .await?;
    }
    // A neighbour whose key starts with the same characters, but not with the prefix.
    let neighbour = format!("{}-neighbour/wrangler.jsonc", prefix.trim_end_matches('/'));
    s3.put_object(&neighbour, b"{}".to_vec()).await?;

    let source = flux
        .create_bucket(&env.client(), env.namespace(), "worker", &s3, &prefix)
        .await?;
    let artifact = source
        .wait_for_artifact(&env.client(), ARTIFACT_TIMEOUT)
        .await?;
    assert!(artifact.revision.starts_with("sha256:"), "{artifact:?}");

    let files = download_and_verify(&artifact, &flux.storage_addr).await?;
    // The objects under the prefix, by their whole keys; nothing else.
    assert_eq!(files, expected(&prefix));
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn an_oci_artifact_pushed_to_the_registry_becomes_an_artifact_with_its_files() -> TestResult {
    let env = TestEnv::new("flux-oci").await?;
    let flux = env.flux()?;
    let registry = env.oci_registry()?;
    let dir = env.scratch_dir()?.join("worker");
    write_tree(&dir)?;
    let repository = unique_name("worker");

    let digest = registry.push_artifact(&dir, &repository, "v1").await?;
    assert!(digest.starts_with("sha256:"), "{digest}");

    let source = flux
        .create_oci_repository(
            &env.client(),
            env.namespace(),
            "worker",
            &registry,
            &repository,
            "v1",
        )
        .await?;
    let artifact = source
        .wait_for_artifact(&env.client(), ARTIFACT_TIMEOUT)
        .await?;
    assert_eq!(
        artifact.revision,
        format!("v1@{digest}"),
        "the revision names the tag and the pushed manifest"
    );

    let files = download_and_verify(&artifact, &flux.storage_addr).await?;
    assert_eq!(files, expected(""));
    env.cleanup().await?;
    Ok(())
}
