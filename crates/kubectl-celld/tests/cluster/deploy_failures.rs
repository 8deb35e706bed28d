//! `deploy` when it goes wrong, against the real API server: a failing deploy, Ctrl-C while
//! celld runs, refusals before any Job exists, and an image without curl (the version is
//! published, the nodes are not asked to reload).

use crate::deploy::{deploy_jobs, deployed_at, wait_jobs_gone, worker};
use crate::support::{self, FakeTools, TestResult};
use celld_api::CelldFleet;
use std::path::Path;

#[tokio::test]
async fn failing_deploy_exits_with_celld_status_and_reloads_nothing() -> TestResult {
    let env = support::env_with_web("plugin-deploy-fail", "deploy-fail").await?;
    let node = support::node_pod(&env, "web", "web-0").await?;
    let tools = FakeTools::new(&env)?;
    tools.answer(
        &support::ip(&node),
        200,
        r#"{"ok":true,"outcome":"adopted"}"#,
    )?;
    let dir = env.scratch_dir()?.join("worker");
    worker(&dir)?;

    let run = support::deploy_web(&env, &dir, |pod| {
        tools.rule(pod).env("CELLD_FAKE_EXIT", "3")
    })
    .await?;
    assert_eq!(run.code, 3, "the plugin exits with celld's status:\n{run}");
    assert!(
        run.stderr.contains("celld deploy failed with exit code 3"),
        "{run}"
    );
    assert!(
        tools.recorded("curl.log").is_empty(),
        "no reload after a failed deploy:\n{run}"
    );
    assert!(!run.stdout.contains("Reload:"), "{run}");
    // Nothing was published: the fleet is not annotated.
    let fleet = env.api::<CelldFleet>().get("web").await?;
    assert_eq!(deployed_at(&fleet), None, "{run}");
    wait_jobs_gone(&env, "web").await?;
    env.cleanup().await?;
    Ok(())
}

/// Ctrl-C while `celld deploy` runs in the deploy pod: the plugin says the version may have
/// been published and how to check, exits 130, and deletes its Job.
#[tokio::test]
async fn ctrl_c_during_celld_deploy_says_the_version_may_be_published() -> TestResult {
    let env = support::env_with_web("plugin-deploy-int", "deploy-int").await?;
    let tools = FakeTools::new(&env)?;
    let dir = env.scratch_dir()?.join("worker");
    worker(&dir)?;

    let run = support::command_paused_pid(
        &env,
        "web",
        &["deploy", dir.to_str().ok_or("path")?, "--fleet", "web"],
        async |pod: String, pid: u32| {
            tools
                .rule(&pod)
                .env("CELLD_FAKE_INTERRUPT", pid.to_string())
                .apply(&env.client(), env.namespace())
                .await?;
            Ok(())
        },
    )
    .await?;
    assert_eq!(run.code, 130, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "celld deploy had started in the deploy pod, so the version may have been published; check with: kubectl celld status web -n {}",
            env.namespace()
        )),
        "{run}"
    );
    assert!(run.stderr.contains("Deleted Job"), "{run}");
    wait_jobs_gone(&env, "web").await?;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn deploy_refuses_unresolvable_storage_before_creating_a_job() -> TestResult {
    let env = support::env("plugin-deploy-refuse").await?;
    let s3 = env.s3()?;
    support::fleet(&env, "nostore", "gone", &support::bucket(&s3, "refuse")).await?;
    support::store(&env, "minio", "missing-secret").await?;
    support::fleet(&env, "nosecret", "minio", &support::bucket(&s3, "refuse2")).await?;

    let run = support::run(&env, &["deploy", "--image", "x", "--fleet", "nostore"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "CelldObjectStore 'gone' (spec.storeRef.name) does not exist in namespace '{}'",
            env.namespace()
        )),
        "{run}"
    );
    let run = support::run(&env, &["deploy", "--image", "x", "--fleet", "nosecret"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("Secret 'missing-secret' with the object-storage credentials does not exist"),
        "{run}"
    );
    let run = support::run(&env, &["deploy", "--image", "x", "--fleet", "nostor"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("did you mean nostore?"), "{run}");
    assert!(deploy_jobs(&env, "nostore").await?.is_empty());
    assert!(deploy_jobs(&env, "nosecret").await?.is_empty());
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn deploy_without_curl_in_the_image_still_deploys_and_skips_the_reload() -> TestResult {
    let env = support::env_with_web("plugin-deploy-nocurl", "nocurl").await?;
    support::node_pod(&env, "web", "web-0").await?;
    let tools = FakeTools::new(&env)?;
    // An image with the deploy tools but no curl: a PATH of links to exactly those tools.
    let only = env.scratch_dir()?.join("only");
    std::fs::create_dir_all(&only)?;
    std::os::unix::fs::symlink(tools.bin.join("celld"), only.join("celld"))?;
    for tool in [
        "rm", "mkdir", "head", "tar", "touch", "find", "sed", "sort", "cp", "cat",
    ] {
        let real = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .ok_or(tool)?;
        std::os::unix::fs::symlink(real, only.join(tool))?;
    }
    let dir = env.scratch_dir()?.join("worker");
    worker(&dir)?;

    let run = support::deploy_web(&env, &dir, |pod| tools.rule(pod).path([only.clone()])).await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        tools.recorded("args").lines().next(),
        Some("deploy"),
        "{run}"
    );
    assert!(
        run.stderr
            .contains("has no curl: the nodes will not be asked to reload"),
        "{run}"
    );
    assert!(!run.stdout.contains("Reload:"), "{run}");
    wait_jobs_gone(&env, "web").await?;
    env.cleanup().await?;
    Ok(())
}
