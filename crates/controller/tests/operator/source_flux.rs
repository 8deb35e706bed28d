//! spec.source.sourceRef with Flux's real source-controller: a fleet waits (stalled) for a
//! Bucket source that does not exist, then its deploy Job gets the artifact's URL and digest;
//! the Job's script runs for real on this machine against that URL (a stub stands in for
//! `celld`), and its own termination message is what the test's kubelet reports.

use crate::source::{V1, attempt_pod};
use crate::support::*;
use celld_api::contract::publish;
use celld_testkit::{ARTIFACT_TIMEOUT, Completion, complete_pod};
use k8s_openapi::api::batch::v1::Job;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// A small Worker project, stored in the S3 server for the Bucket source.
const WORKER: [(&str, &str); 2] = [
    (
        "wrangler.jsonc",
        "{\"name\": \"hello\", \"main\": \"src/index.js\"}\n",
    ),
    (
        "src/index.js",
        "export default { fetch() { return new Response(\"hi\"); } };\n",
    ),
];

/// Stands in for `celld`: records its arguments and the files of the directory it was given.
const STUB_CELLD: &str = "#!/bin/sh\nprintf '%s\\n' \"$@\" >\"$STUB_RECORD/args\"\n(cd \"$2\" && find . -type f | LC_ALL=C sort) >\"$STUB_RECORD/tree\"\n";

/// Runs the deploy container's command here: the work directory under `dir`, the Job's
/// environment for the artifact, a stub `celld` first on PATH. Returns the termination
/// message the script wrote and the files the stub was shown.
fn run_container_here(job: &Job, dir: &Path) -> (String, String) {
    let container = job
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| p.containers[0].clone())
        .expect("the deploy container");
    let work = dir.join("work");
    let bin = dir.join("bin");
    let record = dir.join("record");
    for d in [&work, &bin, &record] {
        std::fs::create_dir_all(d).expect("directories");
    }
    let stub = bin.join("celld");
    std::fs::write(&stub, STUB_CELLD).expect("stub written");
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("stub executable");
    let env: BTreeMap<String, String> = container
        .env
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| Some((e.name, e.value?)))
        .collect();
    let argv: Vec<String> = container
        .command
        .expect("command")
        .into_iter()
        .map(|a| a.replacen(publish::DEFAULT_WORK, &work.display().to_string(), 1))
        .collect();
    let log = dir.join("termination-log");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .env_clear()
        .env("PATH", path)
        .env(publish::WORK_ENV, &work)
        .env(publish::TERMINATION_LOG_ENV, &log)
        .env("STUB_RECORD", &record)
        .env(publish::ARTIFACT_URL_ENV, &env[publish::ARTIFACT_URL_ENV])
        .env(
            publish::ARTIFACT_DIGEST_ENV,
            &env[publish::ARTIFACT_DIGEST_ENV],
        )
        .stdin(Stdio::null())
        .status()
        .expect("sh, curl, sha256sum and tar run the publish script");
    let message = std::fs::read_to_string(&log).expect("the script wrote its result");
    assert!(status.success(), "the script failed: {message}");
    let tree = std::fs::read_to_string(record.join("tree")).expect("the stub ran");
    (message, tree)
}

/// Plays the first deploy pod of the fleet `web`: runs its container's script here (the stub
/// must be shown the project), writes the pointer `celld deploy` would under `fleet_prefix`,
/// and ends the pod with the script's own termination message.
async fn publish_by_script(
    env: &celld_testkit::TestEnv,
    s3: &celld_testkit::S3Settings,
    fleet_prefix: &str,
) {
    let (job_name, pod) = attempt_pod(env, 1).await;
    let job = env.api::<Job>().get(&job_name).await.expect("the Job");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (message_here, tree) = run_container_here(&job, dir.path());
    assert_eq!(
        tree, "./src/index.js\n./wrangler.jsonc\n",
        "the project the stub was shown"
    );
    publish_pointer(s3, fleet_prefix, V1).await;
    complete_pod(
        &env.api(),
        &pod,
        &Completion::succeeded().with_termination_message(message_here),
    )
    .await
    .expect("the deploy pod completed");
}

#[tokio::test]
async fn a_flux_bucket_artifact_is_checked_and_published() {
    let (env, _nodes, op) = env_with_nodes("source-flux", "0.6.0", V1).await;
    let flux = env
        .flux()
        .expect("Flux's source-controller in the local control plane");
    let s3 = env.s3().expect("S3 settings");
    let fleet_prefix = prefix(&s3, "source-flux");
    let source_prefix = s3.unique_prefix("source-flux-src");
    for (path, body) in WORKER {
        s3.put_object(&format!("{source_prefix}{path}"), body.as_bytes().to_vec())
            .await
            .expect("source object");
    }
    celld_fixtures::create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    // The Bucket artifact holds the objects under their whole keys.
    let path = source_prefix.trim_end_matches('/').to_string();
    let extra = json!({"image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 1,
        "source": {"sourceRef": {"kind": "Bucket", "name": "web-src"}, "path": path}});
    apply_fleet(
        &env,
        &celld_fixtures::inline_fleet("web", &s3, &fleet_prefix, extra).expect("a CelldFleet"),
    )
    .await;
    let fleet = wait_condition(&env, "web", "Stalled", "True", Some("SourceNotFound")).await;
    assert!(
        message(&fleet, "SourceSynced").contains("Bucket 'web-src' does not exist"),
        "{}",
        message(&fleet, "SourceSynced")
    );

    // The source exists but cannot make an artifact (its bucket does not exist): the fleet
    // waits, and says so.
    let mut wrong = s3.clone();
    wrong.bucket = "no-such-bucket".into();
    let source = flux
        .create_bucket(
            &env.client(),
            env.namespace(),
            "web-src",
            &wrong,
            &source_prefix,
        )
        .await
        .expect("Bucket source");
    let fleet = wait_condition(&env, "web", "SourceSynced", "False", Some("SourceNotReady")).await;
    assert!(
        message(&fleet, "SourceSynced").contains("waiting for Bucket 'web-src' to be ready"),
        "{}",
        message(&fleet, "SourceSynced")
    );
    assert_eq!(condition(&env, "web", "Stalled").await.status, "False");
    source
        .api(&env.client())
        .patch(
            "web-src",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"bucketName": s3.bucket}})),
        )
        .await
        .expect("the Bucket fixed");
    let artifact = source
        .wait_for_artifact(&env.client(), ARTIFACT_TIMEOUT)
        .await
        .expect("an artifact");
    publish_by_script(&env, &s3, &fleet_prefix).await;
    let fleet = wait_condition(&env, "web", "SourceSynced", "True", Some("Synced")).await;
    let published = fleet
        .status
        .and_then(|s| s.source)
        .and_then(|s| s.last_published)
        .expect("lastPublished");
    assert_eq!(published.revision, artifact.revision);
    assert_eq!(published.digest.as_deref(), Some(artifact.digest.as_str()));
    assert_eq!(published.version.as_deref(), Some(V1));
    op.stop().await;
}

#[tokio::test]
async fn an_oci_repository_on_a_registry_is_followed_tag_by_tag() {
    let (env, _nodes, op) = env_with_nodes("source-oci", "0.6.0", V1).await;
    let flux = env
        .flux()
        .expect("Flux's source-controller in the local control plane");
    let registry = env
        .oci_registry()
        .expect("the OCI registry of the local control plane");
    let s3 = env.s3().expect("S3 settings");
    let fleet_prefix = prefix(&s3, "source-oci");
    let project = tempfile::tempdir().expect("a temporary directory");
    for (path, body) in WORKER {
        let file = project.path().join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("directories");
        std::fs::write(file, body).expect("project file");
    }
    let repository = celld_testkit::unique_name("web-worker");
    registry
        .push_artifact(project.path(), &repository, "v1")
        .await
        .expect("artifact pushed");
    let source = flux
        .create_oci_repository(
            &env.client(),
            env.namespace(),
            "web-src",
            &registry,
            &repository,
            "v1",
        )
        .await
        .expect("OCIRepository");
    let artifact = source
        .wait_for_artifact(&env.client(), ARTIFACT_TIMEOUT)
        .await
        .expect("an artifact");
    celld_fixtures::create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let extra = json!({"image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 1,
        "source": {"sourceRef": {"kind": "OCIRepository", "name": "web-src"}}});
    apply_fleet(
        &env,
        &celld_fixtures::inline_fleet("web", &s3, &fleet_prefix, extra).expect("a CelldFleet"),
    )
    .await;
    publish_by_script(&env, &s3, &fleet_prefix).await;
    let fleet = wait_condition(&env, "web", "SourceSynced", "True", Some("Synced")).await;
    let desired = fleet
        .status
        .and_then(|s| s.source)
        .and_then(|s| s.desired)
        .expect("desired");
    assert_eq!(
        desired.revision, artifact.revision,
        "the tag with its digest"
    );
    assert!(
        desired.revision.starts_with("v1@sha256:"),
        "{}",
        desired.revision
    );
    op.stop().await;
}
