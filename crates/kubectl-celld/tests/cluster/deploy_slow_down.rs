//! `deploy` to a fleet whose bucket answers the first writes with HTTP 503 `SlowDown` (an S3
//! front on 127.0.0.1 before the test S3 server), with the test double of `celld deploy`, which
//! like celld does not retry its writes: the plugin runs `celld deploy` again as a whole, saying
//! each retry on stderr, until it publishes or the attempts run out.

use crate::deploy::worker;
use crate::support::{self, Run, TestResult};
use celld_api::CelldObjectStore;
use celld_api::contract::deploy_retry::ATTEMPTS;
use celld_testkit::deploy_double::{project, version};
use celld_testkit::faults::SlowDownFront;
use celld_testkit::{DeployDouble, S3Settings, TestEnv};
use kube::api::PostParams;

/// Deploys a Worker to the fleet `web`, whose store's endpoint is a front refusing the first
/// `refuse` writes; returns the run, the front, the version deployed and the bucket URL.
async fn deploy_behind_front(
    test: &str,
    refuse: usize,
) -> TestResult<(TestEnv, Run, SlowDownFront, String, String)> {
    let env = support::env(test).await?;
    let s3 = env.s3()?;
    let front = SlowDownFront::start(&s3.endpoint, refuse)?;
    let fronted = S3Settings {
        endpoint: front.endpoint().to_owned(),
        ..s3.clone()
    };
    support::secret(&env, "s3-creds").await?;
    env.api::<CelldObjectStore>()
        .create(
            &PostParams::default(),
            &celld_fixtures::store("slow-s3", &fronted, "s3-creds")?,
        )
        .await?;
    let bucket = support::bucket(&s3, test);
    support::fleet(&env, "web", "slow-s3", &bucket).await?;
    let scratch = env.scratch_dir()?;
    let dir = scratch.join("worker");
    worker(&dir)?;
    let version = version::of(&project::read(&dir)?);
    let double = DeployDouble::new(scratch.join("double")).await?;
    let run = support::deploy_double(
        &env,
        &double,
        "web",
        &[dir.to_str().ok_or("path")?, "--fleet", "web"],
    )
    .await?;
    Ok((env, run, front, version, bucket))
}

fn retries(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| l.contains("retrying celld deploy (attempt "))
        .collect()
}

#[tokio::test]
async fn two_slow_downs_are_retried_and_the_third_attempt_publishes() -> TestResult {
    let (env, run, front, version, bucket) = deploy_behind_front("plugin-slow-down", 2).await?;
    let retried = retries(&run);
    eprintln!(
        "SlowDown refusals: {}, attempts: {}",
        front.refused().len(),
        retried.len() + 1
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(front.refused().len(), 2, "{:?}\n{run}", front.refused());
    assert_eq!(retried.len(), 2, "{run}");
    for (line, attempt) in retried.iter().zip(2..) {
        assert!(
            line.contains(&format!(
                "retrying celld deploy (attempt {attempt} of {ATTEMPTS}): "
            )) && line.contains("HTTP 503 SlowDown"),
            "{line}\n{run}"
        );
    }
    assert!(
        run.stdout.contains(&format!("Published version {version}")),
        "{run}"
    );
    let prefix = bucket
        .trim_start_matches("s3://")
        .split_once('/')
        .ok_or("bucket")?
        .1;
    let pointer = env
        .s3()?
        .get_object(&format!("{prefix}/deploy/current.json"))
        .await?
        .ok_or("no fleet pointer")?;
    let pointer = celld_api::contract::DeployPointer::parse(&pointer)?;
    assert_eq!(pointer.version, version);
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn slow_downs_past_the_last_attempt_fail_with_the_last_reason() -> TestResult {
    let refuse = ATTEMPTS as usize + 2;
    let (env, run, front, _version, _bucket) =
        deploy_behind_front("plugin-slow-down-out", refuse).await?;
    let retried = retries(&run);
    eprintln!(
        "SlowDown refusals: {}, attempts: {}",
        front.refused().len(),
        retried.len() + 1
    );
    assert_eq!(run.code, 1, "celld's exit code:\n{run}");
    assert_eq!(front.refused().len(), ATTEMPTS as usize, "{run}");
    assert_eq!(retried.len(), ATTEMPTS as usize - 1, "{run}");
    let failed = run
        .stderr
        .lines()
        .find(|l| l.contains("celld deploy failed with exit code 1"))
        .ok_or_else(|| format!("no failure line in\n{run}"))?;
    assert!(
        failed.contains(&format!("after {ATTEMPTS} attempts, the last with: "))
            && failed.contains("HTTP 503 SlowDown"),
        "{failed}"
    );
    env.cleanup().await?;
    Ok(())
}
