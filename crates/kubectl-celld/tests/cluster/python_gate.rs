//! celld 0.6.1's gate on Python Workers, against the real API server (no operator runs):
//! `deploy` of a Python Worker is refused before any Job exists while spec.image or a node runs
//! a release older than v0.6.1, naming it, and goes ahead once every node runs v0.6.1 or later.

use crate::deploy::deploy_jobs;
use crate::support::{self, FakeTools, TestResult};
use celld_api::CelldFleet;
use celld_api::rules::env::CONTAINER;
use celld_testkit::Check;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, Patch, PatchParams};
use std::path::Path;
use std::time::Duration;

/// A Python Worker project (its main is a .py module).
fn python_worker(root: &Path) -> TestResult {
    std::fs::create_dir_all(root.join("src"))?;
    std::fs::write(
        root.join("wrangler.jsonc"),
        "{\n  // A Python Worker\n  \"name\": \"web\",\n  \"main\": \"src/entry.py\",\n  \"compatibility_flags\": [\"python_workers\"]\n}\n",
    )?;
    std::fs::write(
        root.join("src/entry.py"),
        "from workers import Response\n\nasync def on_fetch(request, env):\n    return Response(\"hello\")\n",
    )?;
    Ok(())
}

/// Creates node pod `name` of fleet `web` whose celld container runs `image`, Running and Ready.
async fn node(env: &celld_testkit::TestEnv, name: &str, image: &str) -> TestResult<Pod> {
    let mut pod = celld_testkit::fake_pod(name);
    pod.metadata.labels = Some(support::node_labels("web"));
    let container = pod
        .spec
        .as_mut()
        .and_then(|s| s.containers.first_mut())
        .ok_or("fake pod without a container")?;
    container.name = CONTAINER.into();
    container.image = Some(image.into());
    Ok(celld_testkit::create_running_pod(&env.api(), &pod).await?)
}

#[tokio::test]
async fn a_python_worker_waits_until_every_node_runs_0_6_1() -> TestResult {
    let env = support::env_with_web("plugin-python-gate", "python-gate").await?;
    let ns = env.namespace().to_string();
    let patch = serde_json::json!({"spec": {"image": "ghcr.io/denoland/celld:v0.6.2"}});
    env.api::<CelldFleet>()
        .patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    node(&env, "web-0", "ghcr.io/denoland/celld:v0.6.2").await?;
    node(&env, "web-1", "ghcr.io/denoland/celld:v0.6.0").await?;
    let dir = env.scratch_dir()?.join("python");
    python_worker(&dir)?;
    let dir = dir.to_str().ok_or("path")?;

    // A node still on v0.6.0 (the roll has not reached it): refused, naming it, even forced.
    let run = support::run(&env, &["deploy", dir, "--fleet", "web", "--force"]).await?;
    assert_eq!(run.code, 1, "{run}");
    let refusal = format!(
        "error: the Worker is a Python Worker (its main is src/entry.py), which celld serves from v0.6.1 on and which must not reach a fleet until every node runs v0.6.1 or later, and in fleet {ns}/web, node web-1 (v0.6.0) runs an older release: set spec.image to v0.6.1 or later"
    );
    assert!(run.stderr.contains(&refusal), "no {refusal:?} in\n{run}");
    assert!(run.stderr.contains("Nothing was created."), "{run}");
    assert!(deploy_jobs(&env, "web").await?.is_empty(), "{run}");

    // Once every node runs v0.6.2 (web-1 replaced by the roll), the deploy goes ahead.
    let pods = env.api::<Pod>();
    pods.delete("web-1", &DeleteParams::default().grace_period(0))
        .await?;
    celld_testkit::wait_until("web-1 gone", Duration::from_secs(60), || {
        let pods = pods.clone();
        async move {
            match pods.get_opt("web-1").await {
                Ok(None) => Check::Done(()),
                Ok(Some(_)) => Check::Pending("web-1 still exists".into()),
                Err(e) => Check::Pending(e.to_string()),
            }
        }
    })
    .await?;
    let nodes = [
        pods.get("web-0").await?,
        node(&env, "web-1", "ghcr.io/denoland/celld:v0.6.2").await?,
    ];
    let tools = FakeTools::new(&env)?;
    for pod in &nodes {
        tools.answer(&support::ip(pod), 200, r#"{"ok":true,"outcome":"adopted"}"#)?;
    }
    let run = support::deploy(&env, &tools, "web", &[dir, "--fleet", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("Python Worker"), "{run}");
    assert!(
        tools.recorded("args").starts_with("deploy\n"),
        "celld deploy ran:\n{run}"
    );
    env.cleanup().await?;
    Ok(())
}
