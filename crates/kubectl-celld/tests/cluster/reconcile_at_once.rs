//! After a deploy or a rollback the fleet is reconciled at once: with the operator's periodic
//! checks ten minutes apart, a fleet held at 0 nodes scales up, and the fleet's status follows a
//! new version and a rollback, each within seconds of the plugin's command.

use crate::poc_worker::{changed_worker, poc_worker};
use crate::support::{self, TestResult};
use celld_api::{CelldFleet, CelldFleetSpec, StoreRef};
use celld_fixtures::{Launch, OperatorProcess};
use celld_testkit::deploy_double::{project, version};
use celld_testkit::{Check, DeployDouble, TestEnv, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::PostParams;
use std::path::Path;
use std::time::Duration;

const FLEET: &str = "prompt";
const REPLICAS: i32 = 2;
/// The operator's periodic checks, far longer than any wait below.
const RESYNC_SECONDS: u64 = 600;
/// How long the operator may take to act on a command of the plugin.
const PROMPT: Duration = Duration::from_secs(20);

/// The operator watching `env`'s namespace, checking fleets only every ten minutes unless they
/// change; killed when dropped.
async fn slow_operator(env: &TestEnv, log: &Path) -> TestResult<OperatorProcess> {
    let launch =
        Launch::on_namespace_resyncing(env.namespace(), log, RESYNC_SECONDS, RESYNC_SECONDS)
            .await?;
    Ok(OperatorProcess::start(launch).await?)
}

/// Waits until the fleet's StatefulSet asks for `replicas` nodes.
async fn replicas(
    env: &TestEnv,
    replicas: i32,
    within: Duration,
    operator: &OperatorProcess,
) -> TestResult {
    let api = env.api::<StatefulSet>();
    wait_until(
        format!("StatefulSet {FLEET} to ask for {replicas} nodes"),
        within,
        || async {
            match api.get_opt(FLEET).await {
                Ok(Some(s)) => match s.spec.and_then(|s| s.replicas) {
                    Some(n) if n == replicas => Check::Done(()),
                    n => Check::Pending(format!("spec.replicas {n:?}")),
                },
                other => Check::Pending(format!("{other:?}")),
            }
        },
    )
    .await
    .map_err(|e| format!("{e}\noperator log:\n{}", operator.log_tail()))?;
    Ok(())
}

/// Waits until the fleet's status names `version` as deployed.
async fn deployed(
    env: &TestEnv,
    version: &str,
    within: Duration,
    operator: &OperatorProcess,
) -> TestResult {
    let api = env.api::<CelldFleet>();
    wait_until(
        format!("fleet {FLEET} to report version {version}"),
        within,
        || async {
            let reported = api
                .get(FLEET)
                .await
                .ok()
                .and_then(|f| f.status.and_then(|s| s.deployment).map(|d| d.version));
            if reported.as_deref() == Some(version) {
                Check::Done(())
            } else {
                Check::Pending(format!("status.deployment.version {reported:?}"))
            }
        },
    )
    .await
    .map_err(|e| format!("{e}\noperator log:\n{}", operator.log_tail()))?;
    Ok(())
}

#[tokio::test]
async fn deploy_and_rollback_are_reconciled_without_waiting_for_the_periodic_check() -> TestResult {
    let env = support::env("plugin-at-once").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "at-once");
    let scratch = env.scratch_dir()?;
    let log = scratch.join("operator.log");
    let operator = slow_operator(&env, &log).await?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "local-s3", "s3-creds").await?;
    let mut spec = CelldFleetSpec::with_bucket(&bucket);
    spec.store_ref = Some(StoreRef {
        name: "local-s3".into(),
    });
    spec.replicas = REPLICAS;
    env.api::<CelldFleet>()
        .create(&PostParams::default(), &CelldFleet::new(FLEET, spec))
        .await?;
    // Its first reconcile (on creation) holds the fleet at 0 nodes: nothing is deployed.
    replicas(&env, 0, Duration::from_secs(60), &operator).await?;

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
    replicas(&env, REPLICAS, PROMPT, &operator).await?;
    deployed(&env, &v1, PROMPT, &operator).await?;

    // A second version, then a rollback to the first: the status follows each at once.
    let worker = changed_worker(&scratch)?;
    let run = support::deploy_double(
        &env,
        &double,
        FLEET,
        &[worker.to_str().ok_or("path")?, "--fleet", FLEET],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    let v2 = version::of(&project::read(&worker)?);
    assert_ne!(v1, v2);
    deployed(&env, &v2, PROMPT, &operator).await?;

    let run = support::with_curl(&env, &double, FLEET, &["rollback", FLEET, "--no-reload"]).await?;
    assert_eq!(run.code, 0, "{run}");
    deployed(&env, &v1, PROMPT, &operator).await?;
    env.cleanup().await?;
    Ok(())
}
