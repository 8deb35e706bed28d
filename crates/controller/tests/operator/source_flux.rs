//! spec.source.sourceRef with Flux's real source-controller: a fleet waits (stalled) for a
//! Bucket source that does not exist, then its deploy Job gets the artifact's URL and digest;
//! the Job's script runs for real on this machine against that URL (a stub stands in for
//! `celld`), and its own termination message is what the test's kubelet reports. An
//! OCIRepository that follows a semver range is published tag by tag as tags are pushed.

use crate::source::{V1, attempt_pod};
use crate::support::*;
use celld_api::CelldFleet;
use celld_api::contract::publish;
use celld_testkit::{ARTIFACT_TIMEOUT, Check, Completion, complete_pod, wait_until};
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

/// The second version of [`WORKER`]: one more module, so its artifact differs.
const WORKER_V2: [(&str, &str); 3] = [
    WORKER[0],
    (
        "src/index.js",
        "import { greeting } from \"./greeting.js\";\nexport default { fetch() { return new Response(greeting); } };\n",
    ),
    ("src/greeting.js", "export const greeting = \"hi again\";\n"),
];

/// The Worker version `celld deploy` gives the second tag.
const V2: &str = "00000000000000d2";

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

/// Plays the first deploy pod of the fleet `web`'s current revision: runs its container's
/// script here (the stub must be shown `tree`, the project's files), writes the pointer
/// `celld deploy` would under `fleet_prefix` for `version`, and ends the pod with the
/// script's own termination message. Returns the Job.
async fn publish_by_script(
    env: &celld_testkit::TestEnv,
    s3: &celld_testkit::S3Settings,
    fleet_prefix: &str,
    version: &str,
    tree: &str,
) -> Job {
    let (job_name, pod) = attempt_pod(env, 1).await;
    let job = env.api::<Job>().get(&job_name).await.expect("the Job");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (message_here, shown) = run_container_here(&job, dir.path());
    assert_eq!(shown, tree, "the project the stub was shown");
    publish_pointer(s3, fleet_prefix, version).await;
    complete_pod(
        &env.api(),
        &pod,
        &Completion::succeeded().with_termination_message(message_here),
    )
    .await
    .expect("the deploy pod completed");
    job
}

/// The value of the variable `name` in the deploy container of `job`.
fn job_env(job: &Job, name: &str) -> Option<String> {
    job.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|p| p.containers[0].env.as_ref())
        .and_then(|env| env.iter().find(|e| e.name == name))
        .and_then(|e| e.value.clone())
}

/// Writes `files` into `dir`.
fn write_project(dir: &Path, files: &[(&str, &str)]) {
    for (path, body) in files {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("directories");
        std::fs::write(file, body).expect("project file");
    }
}

/// Waits until the fleet `web` has published `revision`, and returns it.
async fn wait_published(env: &celld_testkit::TestEnv, revision: &str) -> CelldFleet {
    let api = env.api::<CelldFleet>();
    wait_until(
        format!("fleet web: {revision} published"),
        TIMEOUT,
        || async {
            let Ok(fleet) = api.get("web").await else {
                return Check::Pending("no fleet".into());
            };
            let source = fleet.status.as_ref().and_then(|s| s.source.as_ref());
            let published = source.and_then(|s| s.last_published.as_ref());
            let synced = fleet
                .status
                .as_ref()
                .and_then(|s| celld_api::conditions::find(&s.conditions, "SourceSynced"))
                .is_some_and(|c| c.status == "True" && c.reason == "Synced");
            if synced && published.is_some_and(|p| p.revision == revision) {
                Check::Done(fleet)
            } else {
                Check::Pending(format!("source {source:?}"))
            }
        },
    )
    .await
    .expect("the revision is published")
}

/// Waits until the fleet `web` starts publishing `revision`.
async fn wait_attempted(env: &celld_testkit::TestEnv, revision: &str) {
    let api = env.api::<CelldFleet>();
    wait_until(
        format!("fleet web: a deploy Job for {revision}"),
        TIMEOUT,
        || async {
            let Ok(fleet) = api.get("web").await else {
                return Check::Pending("no fleet".into());
            };
            let source = fleet.status.and_then(|s| s.source);
            let attempted = source.as_ref().and_then(|s| s.last_attempted.as_ref());
            if attempted.is_some_and(|a| a.revision == revision) {
                Check::Done(())
            } else {
                Check::Pending(format!("source {source:?}"))
            }
        },
    )
    .await
    .expect("a deploy Job for the revision");
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
    publish_by_script(
        &env,
        &s3,
        &fleet_prefix,
        V1,
        "./src/index.js\n./wrangler.jsonc\n",
    )
    .await;
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
    let (env, nodes, op) = env_with_nodes("source-oci", "0.6.0", V1).await;
    let flux = env
        .flux()
        .expect("Flux's source-controller in the local control plane");
    let registry = env
        .oci_registry()
        .expect("the OCI registry of the local control plane");
    let s3 = env.s3().expect("S3 settings");
    let fleet_prefix = prefix(&s3, "source-oci");
    let repository = celld_testkit::unique_name("web-worker");

    // The first tag; the source follows every tag from 1.0.0 on.
    let project = tempfile::tempdir().expect("a temporary directory");
    write_project(project.path(), &WORKER);
    let digest1 = registry
        .push_artifact(project.path(), &repository, "v1.0.0")
        .await
        .expect("artifact pushed");
    let source = flux
        .create_oci_repository_semver(
            &env.client(),
            env.namespace(),
            "web-src",
            &registry,
            &repository,
            ">=1.0.0",
        )
        .await
        .expect("OCIRepository");
    let first = source
        .wait_for_revision(
            &env.client(),
            &format!("v1.0.0@{digest1}"),
            ARTIFACT_TIMEOUT,
        )
        .await
        .expect("the first tag's artifact");
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
    let job1 = publish_by_script(
        &env,
        &s3,
        &fleet_prefix,
        V1,
        "./src/index.js\n./wrangler.jsonc\n",
    )
    .await;
    assert_eq!(
        job_env(&job1, publish::ARTIFACT_DIGEST_ENV).as_deref(),
        Some(first.digest.as_str())
    );
    let fleet = wait_published(&env, &first.revision).await;
    let status = fleet.status.expect("status");
    let source_status = status.source.expect("status.source");
    assert_eq!(
        source_status.desired.map(|d| d.revision).as_deref(),
        Some(first.revision.as_str()),
        "the tag with its digest"
    );
    let published = source_status.last_published.expect("lastPublished");
    assert_eq!(published.version.as_deref(), Some(V1));
    assert_eq!(published.digest.as_deref(), Some(first.digest.as_str()));
    assert_eq!(status.deployment.map(|d| d.version).as_deref(), Some(V1));

    // A second tag, pushed once the first is published: the source moves to it, and the fleet
    // publishes it with a Job of its own that fetches the new artifact.
    let project2 = tempfile::tempdir().expect("a temporary directory");
    write_project(project2.path(), &WORKER_V2);
    let digest2 = registry
        .push_artifact(project2.path(), &repository, "v1.1.0")
        .await
        .expect("artifact pushed");
    assert_ne!(digest2, digest1, "another artifact");
    source
        .request_reconcile(&env.client())
        .await
        .expect("source-controller asked to look again");
    let second = source
        .wait_for_revision(
            &env.client(),
            &format!("v1.1.0@{digest2}"),
            ARTIFACT_TIMEOUT,
        )
        .await
        .expect("the second tag's artifact");
    wait_attempted(&env, &second.revision).await;
    nodes.publish(V2);
    let job2 = publish_by_script(
        &env,
        &s3,
        &fleet_prefix,
        V2,
        "./src/greeting.js\n./src/index.js\n./wrangler.jsonc\n",
    )
    .await;
    assert_ne!(job2.metadata.name, job1.metadata.name, "a Job per revision");
    assert_eq!(
        job_env(&job2, publish::ARTIFACT_URL_ENV).as_deref(),
        Some(second.url.as_str())
    );
    assert_eq!(
        job_env(&job2, publish::ARTIFACT_DIGEST_ENV).as_deref(),
        Some(second.digest.as_str())
    );
    let fleet = wait_published(&env, &second.revision).await;
    let status = fleet.status.expect("status");
    let source_status = status.source.expect("status.source");
    assert_eq!(
        source_status.desired.map(|d| d.revision).as_deref(),
        Some(second.revision.as_str())
    );
    let published = source_status.last_published.expect("lastPublished");
    assert_eq!(published.version.as_deref(), Some(V2));
    assert_eq!(published.digest.as_deref(), Some(second.digest.as_str()));
    assert_eq!(
        source_status
            .history
            .first()
            .map(|h| (h.revision.as_str(), h.version.as_deref())),
        Some((first.revision.as_str(), Some(V1))),
        "the first tag, published before"
    );
    assert_eq!(status.deployment.map(|d| d.version).as_deref(), Some(V2));
    op.stop().await;
}
