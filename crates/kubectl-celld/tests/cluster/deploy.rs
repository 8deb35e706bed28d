//! `deploy` against the real API server: the directory goes through pods/exec into the deploy
//! pod (kwok runs the pod's commands locally, with fake `celld` and `curl` that record what
//! they got), `--image` mode, and the per-node reload report (a node answering 422 makes the
//! deploy exit with code 3). When it goes wrong: `deploy_failures.rs`.

use crate::support::{self, FakeTools, TestResult};
use celld_api::{CelldFleet, CelldFleetSpec, labels};
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{ListParams, PostParams};
use std::path::Path;
use std::time::Duration;

fn write(root: &Path, rel: &str, content: &str) -> TestResult {
    let p = root.join(rel);
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(p, content)?;
    Ok(())
}

const INDEX_TS: &str =
    "import { hello } from './lib/util';\nexport default { fetch: () => new Response(hello()) };\n";

/// A Worker project with things that must not be uploaded.
pub(crate) fn worker(root: &Path) -> TestResult {
    write(
        root,
        "wrangler.jsonc",
        "{ \"name\": \"web\", \"main\": \"src/index.ts\" }\n",
    )?;
    write(root, "src/index.ts", INDEX_TS)?;
    write(
        root,
        "src/lib/util.ts",
        "export const hello = () => 'hello';\n",
    )?;
    write(root, "README.md", "# web\n")?;
    write(root, ".git/HEAD", "ref: refs/heads/main\n")?;
    write(root, "node_modules/dep/index.js", "module.exports = 1;\n")?;
    write(
        root,
        "src/node_modules/nested/index.js",
        "module.exports = 2;\n",
    )?;
    write(root, ".celldignore", "*.log\nsecrets/\n")?;
    write(root, "debug.log", "noise\n")?;
    write(root, "secrets/key.txt", "do not ship\n")?;
    Ok(())
}

/// The fleet's `platform.celld.dev/deployed-at` annotation.
pub(crate) fn deployed_at(fleet: &CelldFleet) -> Option<&str> {
    fleet
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(labels::DEPLOYED_AT))
        .map(String::as_str)
}

pub(crate) async fn deploy_jobs(env: &celld_testkit::TestEnv, fleet: &str) -> TestResult<Vec<Job>> {
    let selector = format!(
        "{}={fleet},{}={}",
        labels::FLEET,
        labels::ROLE,
        labels::ROLE_DEPLOY
    );
    Ok(env
        .api::<Job>()
        .list(&ListParams::default().labels(&selector))
        .await?
        .items)
}

pub(crate) async fn wait_jobs_gone(env: &celld_testkit::TestEnv, fleet: &str) -> TestResult {
    wait_until(
        "the deploy Job to be deleted",
        Duration::from_secs(30),
        || async {
            match deploy_jobs(env, fleet).await {
                Ok(jobs) if jobs.is_empty() => Check::Done(()),
                Ok(jobs) => Check::Pending(format!("{} Jobs left", jobs.len())),
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn deploy_streams_a_directory_and_reloads_every_ready_node() -> TestResult {
    let env = support::env("plugin-deploy-dir").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "deploy-dir");
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "minio", "s3-creds").await?;
    support::fleet(&env, "web", "minio", &bucket).await?;
    let mut ips = Vec::new();
    for name in ["web-0", "web-1", "web-2"] {
        ips.push(support::ip(&support::node_pod(&env, "web", name).await?));
    }
    let tools = FakeTools::new(&env)?;
    tools.answer(&ips[0], 200, r#"{"ok":true,"outcome":"adopted"}"#)?;
    tools.answer(&ips[1], 200, r#"{"ok":true,"outcome":"unchanged"}"#)?;
    tools.answer(
        &ips[2],
        422,
        r#"{"ok":false,"error":"module not found: ./missing.js"}"#,
    )?;
    let dir = env.scratch_dir()?.join("worker");
    worker(&dir)?;

    let run = support::deploy_web(&env, &dir, |pod| tools.rule(pod)).await?;
    // web-2 refused the version: the deploy fails (exit code 3) after publishing and reporting.
    assert_eq!(run.code, 3, "{run}");
    let ns = env.namespace();
    for text in [
        format!(
            "error: node web-2 of fleet {ns}/web refused the new version (the reload got HTTP 422: module not found: ./missing.js)"
        ),
        format!("See why with: kubectl celld logs web -n {ns}"),
        format!("go back with: kubectl celld rollback web -n {ns}\n"),
    ] {
        assert!(run.stderr.contains(&text), "no {text:?} in\n{run}");
    }
    // The fleet is annotated, so the operator reconciles it at once.
    let fleet = env.api::<CelldFleet>().get("web").await?;
    let stamp = deployed_at(&fleet)
        .ok_or_else(|| format!("no {} annotation\n{run}", labels::DEPLOYED_AT))?;
    assert!(stamp.parse::<jiff::Timestamp>().is_ok(), "{stamp}");

    // celld got exactly the fleet's storage, and exactly the files that should be uploaded.
    assert_eq!(
        tools.recorded("args"),
        format!(
            "deploy\nsrc\n--bucket\n{bucket}\n--endpoint\n{}\n--region\nus-east-1\n",
            s3.endpoint
        ),
        "{run}"
    );
    assert_eq!(
        tools.recorded("files"),
        "README.md\nsrc/index.ts\nsrc/lib/util.ts\nwrangler.jsonc\n",
        "{run}"
    );
    assert_eq!(tools.recorded("tree/src/index.ts"), INDEX_TS);

    // Its output was streamed: stdout to stdout, stderr to stderr.
    assert!(
        run.stdout
            .contains("celld deploy: published version 0123456789abcdef"),
        "{run}"
    );
    assert!(run.stderr.contains("esbuild: 2 modules bundled"), "{run}");
    // Progress.
    for step in [
        "Packed 4 files",
        "Created Job",
        "Waiting for the deploy pod",
        "is running",
        "Uploading: ",
        "Uploaded 4 files",
        &format!("Running: celld deploy src --bucket {bucket}"),
        "Deleted Job",
    ] {
        assert!(run.stderr.contains(step), "no {step:?} in\n{run}");
    }

    // One reload per node, each outcome reported.
    let mut urls: Vec<String> = tools
        .recorded("curl.log")
        .lines()
        .map(str::to_string)
        .collect();
    urls.sort();
    let mut want: Vec<String> = ips
        .iter()
        .map(|ip| format!("http://{ip}:8081/reload"))
        .collect();
    want.sort();
    assert_eq!(urls, want, "{run}");
    for line in [
        format!("web-0 ({}): adopted the new version", ips[0]),
        format!("web-1 ({}): unchanged (already on this version)", ips[1]),
        format!(
            "web-2 ({}): FAILED to load the new version (HTTP 422): module not found: ./missing.js",
            ips[2]
        ),
        "Reload: 1 adopted, 1 unchanged, 1 failed".to_string(),
    ] {
        assert!(run.stdout.contains(&line), "no {line:?} in\n{run}");
    }

    // No credential in the output.
    for secret in [&s3.secret_access_key, &s3.access_key_id] {
        assert!(!run.stdout.contains(secret.as_str()) && !run.stderr.contains(secret.as_str()));
    }
    wait_jobs_gone(&env, "web").await?;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn deploy_image_mode_runs_the_baked_in_source_and_keeps_the_job() -> TestResult {
    let env = support::env("plugin-deploy-image").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "deploy-image");
    support::secret(&env, "inline-creds").await?;
    // An inline connection this time (no CelldObjectStore).
    let mut spec = CelldFleetSpec::with_bucket(&bucket);
    spec.object_storage.endpoint = Some(s3.endpoint.clone());
    spec.object_storage.region = Some("eu-central-1".into());
    spec.object_storage.allow_http = Some(true);
    spec.object_storage.credentials_secret_ref = Some(celld_api::SecretRef {
        name: "inline-creds".into(),
    });
    let fleet = env
        .api::<CelldFleet>()
        .create(&PostParams::default(), &CelldFleet::new("img", spec))
        .await?;
    let tools = FakeTools::new(&env)?;

    let image = "registry.example.com/web-src:1.4.2";
    let run = support::deploy(
        &env,
        &tools,
        "img",
        &[
            "--image",
            image,
            "--fleet",
            "img",
            "--keep-job",
            "--no-reload",
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        tools.recorded("args"),
        format!(
            "deploy\n/app\n--bucket\n{bucket}\n--endpoint\n{}\n--region\neu-central-1\n",
            s3.endpoint
        ),
        "{run}"
    );
    assert!(
        !run.stderr.contains("Upload"),
        "no upload in --image mode:\n{run}"
    );
    assert!(run.stderr.contains("--no-reload"), "{run}");
    assert!(tools.recorded("curl.log").is_empty(), "{run}");
    assert!(run.stderr.contains("Kept Job"), "{run}");

    // The kept Job: the image, restricted pod, credentials only by Secret reference.
    let jobs = deploy_jobs(&env, "img").await?;
    assert_eq!(jobs.len(), 1, "{run}");
    let job = &jobs[0];
    let spec = job.spec.as_ref().ok_or("job spec")?;
    assert_eq!(spec.backoff_limit, Some(0));
    assert_eq!(spec.ttl_seconds_after_finished, None, "--keep-job keeps it");
    assert!(spec.active_deadline_seconds.is_some());
    let owner = &job.metadata.owner_references.as_ref().ok_or("owner")?[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        (
            "CelldFleet",
            fleet.metadata.uid.as_deref().unwrap_or_default()
        )
    );
    let pod = spec.template.spec.as_ref().ok_or("pod spec")?;
    let c = &pod.containers[0];
    assert_eq!(c.image.as_deref(), Some(image));
    assert_eq!(c.working_dir.as_deref(), Some("/work"));
    let sc = c.security_context.as_ref().ok_or("securityContext")?;
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    let env_vars = c.env.as_ref().ok_or("env")?;
    for key in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ] {
        let v = env_vars.iter().find(|e| e.name == key).ok_or(key)?;
        assert!(v.value.is_none(), "{key} must not carry a value");
        let r = v
            .value_from
            .as_ref()
            .and_then(|f| f.secret_key_ref.as_ref())
            .ok_or(key)?;
        assert_eq!((r.name.as_str(), r.key.as_str()), ("inline-creds", key));
    }
    let pod_labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    assert_eq!(
        pod_labels.get(labels::FLEET).map(String::as_str),
        Some("img")
    );
    assert_eq!(
        pod_labels.get(labels::ROLE).map(String::as_str),
        Some(labels::ROLE_DEPLOY)
    );
    // Its pod is still there for inspection.
    let pods: Api<Pod> = env.api();
    let selector = format!(
        "{}=img,{}={}",
        labels::FLEET,
        labels::ROLE,
        labels::ROLE_DEPLOY
    );
    assert_eq!(
        pods.list(&ListParams::default().labels(&selector))
            .await?
            .items
            .len(),
        1
    );
    env.cleanup().await?;
    Ok(())
}
