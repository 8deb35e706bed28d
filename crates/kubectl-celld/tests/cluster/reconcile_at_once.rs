//! After a deploy or a rollback the fleet is reconciled at once: with the operator's periodic
//! checks ten minutes apart, a fleet held at 0 nodes scales up, and the fleet's status follows a
//! new version and a rollback, each within seconds of the plugin's command.

use crate::poc_worker::poc_worker;
use crate::support::{self, TestResult};
use celld_api::{CelldFleet, CelldFleetSpec, StoreRef};
use celld_testkit::deploy_double::{project, version};
use celld_testkit::{Check, DeployDouble, OPERATOR_BIN_ENV, TestEnv, paths, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::PostParams;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const FLEET: &str = "prompt";
const REPLICAS: i32 = 2;
/// The operator's periodic checks, far longer than any wait below.
const RESYNC_SECONDS: &str = "600";
/// How long the operator may take to act on a command of the plugin.
const PROMPT: Duration = Duration::from_secs(20);

/// The operator watching `env`'s namespace, checking fleets only every ten minutes unless they
/// change; killed when dropped.
async fn slow_operator(env: &TestEnv, log: &Path) -> TestResult<tokio::process::Child> {
    let bin =
        celld_testkit::cargo_bin("celld-operator", "celld-operator", OPERATOR_BIN_ENV).await?;
    let out = std::fs::File::create(log)?;
    let err = out.try_clone()?;
    Ok(tokio::process::Command::new(bin)
        .args(["--leader-elect=false", "--namespace", env.namespace()])
        .args(["--metrics-addr", "127.0.0.1:0"])
        .args(["--resync-seconds", RESYNC_SECONDS])
        .args(["--pending-resync-seconds", RESYNC_SECONDS])
        .args(["--s3-timeout-seconds", "3"])
        .env("KUBECONFIG", paths::kubeconfig())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .kill_on_drop(true)
        .spawn()?)
}

/// Waits until the fleet's StatefulSet asks for `replicas` nodes.
async fn replicas(env: &TestEnv, replicas: i32, within: Duration, log: &Path) -> TestResult {
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
    .map_err(|e| format!("{e}\noperator log:\n{}", tail(log)))?;
    Ok(())
}

/// Waits until the fleet's status names `version` as deployed.
async fn deployed(env: &TestEnv, version: &str, within: Duration, log: &Path) -> TestResult {
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
    .map_err(|e| format!("{e}\noperator log:\n{}", tail(log)))?;
    Ok(())
}

fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

#[tokio::test]
async fn deploy_and_rollback_are_reconciled_without_waiting_for_the_periodic_check() -> TestResult {
    let env = support::env("plugin-at-once").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "at-once");
    let scratch = env.scratch_dir()?;
    let log = scratch.join("operator.log");
    let _operator = slow_operator(&env, &log).await?;
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
    replicas(&env, 0, Duration::from_secs(60), &log).await?;

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
    replicas(&env, REPLICAS, PROMPT, &log).await?;
    deployed(&env, &v1, PROMPT, &log).await?;

    // A second version, then a rollback to the first: the status follows each at once.
    let worker = scratch.join("worker");
    for rel in [
        "wrangler.jsonc",
        "src/index.js",
        "src/greeting.js",
        "src/respond.js",
        "src/routes.js",
    ] {
        let target = worker.join(rel);
        std::fs::create_dir_all(target.parent().ok_or("parent")?)?;
        std::fs::copy(poc.join(rel), &target)?;
    }
    std::fs::write(
        worker.join("src/greeting.js"),
        std::fs::read_to_string(poc.join("src/greeting.js"))? + "// second version\n",
    )?;
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
    deployed(&env, &v2, PROMPT, &log).await?;

    let run = support::with_curl(&env, &double, FLEET, &["rollback", FLEET, "--no-reload"]).await?;
    assert_eq!(run.code, 0, "{run}");
    deployed(&env, &v1, PROMPT, &log).await?;
    env.cleanup().await?;
    Ok(())
}
