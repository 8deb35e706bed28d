//! A fleet whose Worker comes from spec.source, against the real API server (no operator runs):
//! `deploy` refuses it before any Job exists, deploys with `--force` (warning what the operator
//! will do) or once publishing from the source is suspended (with a note); `rollback` suspends
//! the source with the `platform.celld.dev/source-suspended` annotation before it moves the
//! pointers back, and leaves a suspension it finds alone.

use crate::deploy::{deploy_jobs, wait_jobs_gone, worker};
use crate::poc_worker::{changed_worker, poc_worker};
use crate::support::{self, FakeTools, TestResult};
use celld_api::CelldFleet;
use celld_api::labels::SOURCE_SUSPENDED;
use celld_fixtures::pointer::pointer_json;
use celld_testkit::deploy_double::{pointer, project, version};
use celld_testkit::{DeployDouble, TestEnv};
use kube::api::{Patch, PatchParams};

const REFERENCE: &str =
    "registry.invalid/w@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// Gives fleet `name` a spec.source naming [`REFERENCE`] (every other field defaulted).
async fn set_source(env: &TestEnv, name: &str) -> TestResult {
    let patch = serde_json::json!({"spec": {"source": {"image": {"reference": REFERENCE}}}});
    env.api::<CelldFleet>()
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// Sets the source-suspended annotation of fleet `name` to `reason`.
async fn suspend(env: &TestEnv, name: &str, reason: &str) -> TestResult {
    let patch = serde_json::json!({"metadata": {"annotations": {SOURCE_SUSPENDED: reason}}});
    env.api::<CelldFleet>()
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

/// The fleet's source-suspended annotation.
async fn suspended(env: &TestEnv, name: &str) -> TestResult<Option<String>> {
    let fleet = env.api::<CelldFleet>().get(name).await?;
    Ok(fleet
        .metadata
        .annotations
        .and_then(|mut a| a.remove(SOURCE_SUSPENDED)))
}

#[tokio::test]
async fn deploy_to_a_sourced_fleet_is_refused_unless_forced_or_suspended() -> TestResult {
    let env = support::env_with_web("plugin-sourced-deploy", "sourced-deploy").await?;
    set_source(&env, "web").await?;
    let ns = env.namespace().to_string();
    let node = support::node_pod(&env, "web", "web-0").await?;
    let tools = FakeTools::new(&env)?;
    tools.answer(
        &support::ip(&node),
        200,
        r#"{"ok":true,"outcome":"adopted"}"#,
    )?;
    let dir = env.scratch_dir()?.join("worker");
    worker(&dir)?;
    let dir = dir.to_str().ok_or("path")?;

    // Refused before anything is created: the source, its policy and the ways on are named.
    let run = support::run(&env, &["deploy", dir, "--fleet", "web"]).await?;
    assert_eq!(run.code, 1, "{run}");
    for part in [
        format!(
            "error: fleet {ns}/web publishes its Worker from spec.source (image {REFERENCE}, driftPolicy Correct): the operator would publish the source again over this deploy at its next reconcile. Nothing was created."
        ),
        format!(
            "kubectl annotate celldfleet web -n {ns} platform.celld.dev/source-suspended=\"REASON\" (or set spec.source.suspend: true in git)"
        ),
        "or deploy anyway with --force".to_string(),
    ] {
        assert!(run.stderr.contains(&part), "no {part:?} in\n{run}");
    }
    assert!(!run.stderr.contains("Created Job"), "{run}");
    assert!(deploy_jobs(&env, "web").await?.is_empty(), "{run}");

    // --force deploys, warning that the operator will publish the source over it.
    let run = support::deploy(&env, &tools, "web", &[dir, "--fleet", "web", "--force"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "warning: deploying anyway (--force): fleet {ns}/web publishes its Worker from spec.source (image {REFERENCE}, driftPolicy Correct); the operator will publish the source again over this deploy within a reconcile"
        )),
        "{run}"
    );
    assert!(
        tools.recorded("args").starts_with("deploy\n"),
        "celld deploy ran:\n{run}"
    );
    wait_jobs_gone(&env, "web").await?;

    // Suspended by hand: the deploy goes ahead without --force, with a note.
    suspend(&env, "web", "hotfix by hand").await?;
    let run = support::deploy(&env, &tools, "web", &[dir, "--fleet", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains(
            "and publishing from the source is suspended (annotation platform.celld.dev/source-suspended: hotfix by hand), so the operator leaves this deploy in place"
        ),
        "{run}"
    );
    assert!(!run.stderr.contains("warning: deploying anyway"), "{run}");
    wait_jobs_gone(&env, "web").await?;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn rollback_of_a_sourced_fleet_suspends_the_source_first() -> TestResult {
    const FLEET: &str = "srcroll";
    const SCRIPT: &str = "celld-poc-hello";
    let env = support::env("plugin-sourced-rollback").await?;
    let ns = env.namespace().to_string();
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "sourced-rollback");
    let prefix = bucket
        .strip_prefix(&format!("s3://{}/", s3.bucket))
        .ok_or("bucket prefix")?
        .to_string();
    let scratch = env.scratch_dir()?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "local-s3", "s3-creds").await?;
    support::fleet(&env, FLEET, "local-s3", &bucket).await?;

    // A bucket with history: two versions through the real deploy, before the fleet had a
    // source.
    let poc = poc_worker();
    let run = support::deploy_double(
        &env,
        &double,
        FLEET,
        &[poc.to_str().ok_or("path")?, "--fleet", FLEET],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    let v1 = version::of(&project::read(&poc)?);
    let changed = changed_worker(&scratch)?;
    let run = support::deploy_double(
        &env,
        &double,
        FLEET,
        &[changed.to_str().ok_or("path")?, "--fleet", FLEET],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    let v2 = version::of(&project::read(&changed)?);
    set_source(&env, FLEET).await?;
    assert_eq!(suspended(&env, FLEET).await?, None);

    // The rollback sets the annotation, then moves the pointers back, and says how to resume.
    let before = jiff::Timestamp::now();
    let run = support::with_curl(&env, &double, FLEET, &["rollback", FLEET, "--no-reload"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let reason = suspended(&env, FLEET)
        .await?
        .ok_or_else(|| format!("no {SOURCE_SUSPENDED} annotation after\n{run}"))?;
    let head = format!("kubectl celld rollback to version {v1} (from {v2}) at ");
    let at: jiff::Timestamp = reason
        .strip_prefix(&head)
        .ok_or_else(|| format!("{reason:?} does not start with {head:?}"))?
        .parse()?;
    assert!(
        at >= before
            .round(jiff::Unit::Second)?
            .checked_sub(jiff::SignedDuration::from_secs(1))?,
        "{reason}"
    );
    assert!(
        run.stderr.contains(&format!(
            "Suspended publishing from spec.source: set {SOURCE_SUSPENDED}=\"{reason}\" on CelldFleet {ns}/{FLEET}"
        )),
        "{run}"
    );
    for line in [
        format!("Rolled back fleet {ns}/{FLEET} to version {v1}"),
        "Publishing from spec.source is suspended (platform.celld.dev/source-suspended set by this rollback), so the operator does not publish the source over the rollback.".to_string(),
        format!(
            "resume publishing with: kubectl annotate celldfleet {FLEET} -n {ns} platform.celld.dev/source-suspended-"
        ),
    ] {
        assert!(run.stdout.contains(&line), "no {line:?} in\n{run}");
    }
    let fleet_pointer = format!("{prefix}/{}", pointer::FLEET_POINTER);
    let live = s3
        .get_object(&fleet_pointer)
        .await?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    assert_eq!(live, Some(pointer_json(SCRIPT, &v1)?));

    // A second rollback finds the source suspended and leaves the reason as it is.
    let run = support::with_curl(
        &env,
        &double,
        FLEET,
        &["rollback", FLEET, "--to", &v2, "--no-reload"],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains("Publishing from spec.source was already suspended (annotation platform.celld.dev/source-suspended: kubectl celld rollback to version"),
        "{run}"
    );
    assert_eq!(suspended(&env, FLEET).await?, Some(reason));
    env.cleanup().await?;
    Ok(())
}
