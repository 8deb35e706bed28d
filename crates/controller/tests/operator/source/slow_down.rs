//! A bucket that answers the first writes with HTTP 503 `SlowDown` (an S3 front on 127.0.0.1
//! before the test S3 server): the deploy Job's script runs `celld deploy` (the test double,
//! which like celld does not retry its writes) again until it publishes, and its result counts
//! the attempts. The test plays the kubelet: it runs the Job's own command on this machine, the
//! source directory in place of the image volume at /src, then ends the pod with the result the
//! script wrote.

use super::harness::{REF1, attempt_pod, restricted};
use crate::support::*;
use celld_api::contract::deploy_retry::{ATTEMPTS, BACKOFF_SECONDS};
use celld_api::contract::publish::{PublishResult, TERMINATION_LOG_ENV, WORK_ENV};
use celld_testkit::deploy_double::{project, version};
use celld_testkit::faults::SlowDownFront;
use celld_testkit::{Completion, DeployDouble, S3Settings, complete_pod};
use k8s_openapi::api::batch::v1::Job;
use serde_json::json;
use std::path::Path;

/// The image volume's mount point in the deploy container.
const SOURCE: &str = "/src";

fn write_worker(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).expect("the Worker's directory");
    std::fs::write(
        dir.join("wrangler.jsonc"),
        "{ \"name\": \"web\", \"main\": \"src/index.js\" }\n",
    )
    .expect("wrangler.jsonc");
    std::fs::write(
        dir.join("src/index.js"),
        "export default { fetch() { return new Response('slow down') } }\n",
    )
    .expect("index.js");
}

#[tokio::test]
async fn two_slow_downs_are_retried_by_the_deploy_job_and_the_source_syncs() {
    let (env, nodes, _op) = env_with_nodes("source-slow-down", "0.6.0", super::harness::V1).await;
    restricted(&env).await;
    let s3 = env.s3().expect("S3 settings");
    let front = SlowDownFront::start(&s3.endpoint, 2).expect("the SlowDown front");
    let fronted = S3Settings {
        endpoint: front.endpoint().to_owned(),
        ..s3.clone()
    };
    let prefix = prefix(&s3, "source-slow-down");
    celld_fixtures::create_credentials(&env.api(), "creds", &fronted)
        .await
        .expect("credentials Secret created");
    let spec = json!({
        "image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 2,
        "source": {"image": {"reference": REF1}},
    });
    apply_fleet(
        &env,
        &celld_fixtures::inline_fleet("web", &fronted, &prefix, spec).expect("a CelldFleet"),
    )
    .await;

    let (job, pod) = attempt_pod(&env, 1).await;
    let scratch = env.scratch_dir().expect("scratch directory");
    let worker = scratch.join("image");
    write_worker(&worker);
    let published = version::of(&project::read(&worker).expect("the Worker reads"));
    nodes.publish(&published);
    let double = DeployDouble::new(scratch.join("double"))
        .await
        .expect("the deploy double");

    // The kubelet's part: the Job's command, with the image's files at /src.
    let created = env.api::<Job>().get(&job).await.expect("the Job");
    let container = created
        .spec
        .and_then(|s| s.template.spec)
        .map(|s| s.containers[0].clone())
        .expect("the deploy container");
    let command: Vec<String> = container
        .command
        .expect("command")
        .into_iter()
        .map(|a| match a.as_str() {
            SOURCE => worker.display().to_string(),
            _ => a,
        })
        .collect();
    assert!(
        command.contains(&format!("--endpoint={}", front.endpoint()))
            || command
                .windows(2)
                .any(|w| w[0] == "--endpoint" && w[1] == front.endpoint()),
        "the deploy writes through the front: {command:?}"
    );
    let termination_log = scratch.join("termination-log");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).expect("work directory");
    let path = format!("{}:/usr/bin:/bin", double.bin_dir().display());
    let mut run = tokio::process::Command::new(&command[0]);
    run.args(&command[1..])
        .env_clear()
        .env("PATH", path)
        .env("AWS_ACCESS_KEY_ID", &s3.access_key_id)
        .env("AWS_SECRET_ACCESS_KEY", &s3.secret_access_key)
        .env(WORK_ENV, &work)
        .env(TERMINATION_LOG_ENV, &termination_log);
    for var in container.env.unwrap_or_default() {
        if let Some(value) = var.value {
            run.env(var.name, value);
        }
    }
    let ran = run.output().await.expect("the deploy command runs");
    let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
    let message = std::fs::read_to_string(&termination_log).expect("the script's result");
    let result = PublishResult::read(&message).expect("a publish result");
    eprintln!(
        "SlowDown refusals: {}, attempts: {}",
        front.refused().len(),
        result.attempts.unwrap_or(0)
    );
    assert!(
        ran.status.success(),
        "{result:?}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(result.is_published(), "{result:?}\n{stdout}");
    assert_eq!(result.attempts, Some(3), "{stdout}");
    assert_eq!(front.refused().len(), 2, "{:?}", front.refused());
    for (attempt, wait) in [(2, BACKOFF_SECONDS[0]), (3, BACKOFF_SECONDS[1])] {
        let line = format!("celld-publish: attempt {attempt} of {ATTEMPTS} in {wait}s after: ");
        assert!(stdout.contains(&line), "{line:?} in\n{stdout}");
    }
    complete_pod(
        &env.api(),
        &pod,
        &Completion::succeeded().with_termination_message(message.as_str()),
    )
    .await
    .expect("the deploy pod completed");

    let fleet = wait_condition(&env, "web", "SourceSynced", "True", Some("Synced")).await;
    let last = fleet
        .status
        .and_then(|s| s.source)
        .and_then(|s| s.last_published)
        .expect("lastPublished");
    assert_eq!(last.version.as_deref(), Some(published.as_str()));
    assert_eq!(last.revision, REF1);
}
