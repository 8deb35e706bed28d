//! `deploy` and `rollback` wait until every ready node serves the new version, as the operator
//! reports it (a stand-in answers the nodes' `/state` and `/reload` for kwok's pods): the
//! wait ends when every node serves it, or fails with exit code 3 naming the node that refused
//! it and celld's reason.

use crate::poc_worker::{changed_worker, poc_worker};
use crate::support::{self, TestResult};
use celld_api::{CelldFleet, CelldFleetSpec, StoreRef, conditions};
use celld_fixtures::{Launch, NodeDouble, OperatorProcess};
use celld_testkit::deploy_double::{project, version};
use celld_testkit::{DeployDouble, TestEnv};
use kube::api::PostParams;
use std::path::Path;

const FLEET: &str = "waits";
const REFUSAL: &str = "module not found: ./greeting.js";
/// The plugin's wait in these tests; the operator looks at fleets every 2 s.
const WAIT: &str = "60s";

/// The operator watching `env`'s namespace, reaching every node's API at `nodes`.
async fn operator(env: &TestEnv, nodes: &NodeDouble, log: &Path) -> TestResult<OperatorProcess> {
    let launch = Launch::on_namespace(env.namespace(), log)
        .await?
        .args(["--node-api-connect-to".to_string(), nodes.address.clone()]);
    Ok(OperatorProcess::start(launch).await?)
}

#[tokio::test]
async fn deploy_waits_for_every_node_and_fails_naming_the_node_that_refused() -> TestResult {
    let env = support::env("plugin-wait").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "wait");
    let scratch = env.scratch_dir()?;
    let poc = poc_worker();
    let v1 = version::of(&project::read(&poc)?);
    let worker = changed_worker(&scratch)?;
    let v2 = version::of(&project::read(&worker)?);
    assert_ne!(v1, v2);
    let nodes = NodeDouble::start("0.6.1", &v1).await?;
    let operator = operator(&env, &nodes, &scratch.join("operator.log")).await?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "local-s3", "s3-creds").await?;
    let mut spec = CelldFleetSpec::with_bucket(&bucket);
    spec.store_ref = Some(StoreRef {
        name: "local-s3".into(),
    });
    spec.replicas = 2;
    spec.image = "ghcr.io/denoland/celld:v0.6.1".into();
    env.api::<CelldFleet>()
        .create(&PostParams::default(), &CelldFleet::new(FLEET, spec))
        .await?;

    // The first deploy: the nodes start on it, and the wait ends when both serve it.
    let poc_dir = poc.to_str().ok_or("path")?;
    let run = support::deploy_double(
        &env,
        &double,
        FLEET,
        &[poc_dir, "--fleet", FLEET, "--wait-timeout", WAIT],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}\noperator log:\n{}", operator.log_tail());
    assert!(
        run.stderr.contains(&format!(
            "Adopted: every ready node serves version {v1} (2/2)"
        )),
        "{run}"
    );

    // The second: waits-1 refuses it, and the deploy fails naming it with celld's reason.
    nodes.refuse("waits-1", &v2, REFUSAL);
    nodes.publish(&v2);
    let worker_dir = worker.to_str().ok_or("path")?;
    let run = support::deploy_double(
        &env,
        &double,
        FLEET,
        &[worker_dir, "--fleet", FLEET, "--wait-timeout", WAIT],
    )
    .await?;
    assert_eq!(run.code, 3, "{run}\noperator log:\n{}", operator.log_tail());
    for text in [
        "waits-1",
        REFUSAL,
        v2.as_str(),
        "the version stays published",
    ] {
        assert!(run.stderr.contains(text), "no {text:?} in\n{run}");
    }
    let fleet = env.api::<CelldFleet>().get(FLEET).await?;
    let status = fleet.status.ok_or("no status")?;
    let adopted = conditions::find(&status.conditions, conditions::ADOPTED).ok_or("no Adopted")?;
    assert_eq!(
        (adopted.status.as_str(), adopted.reason.as_str()),
        ("False", "VersionRefused"),
        "{adopted:?}"
    );
    assert!(adopted.message.contains("waits-1"), "{adopted:?}");

    // Rolling back to the version every node loads: the wait ends with both on it again.
    nodes.publish(&v1);
    let run = support::with_curl(
        &env,
        &double,
        FLEET,
        &["rollback", FLEET, "--no-reload", "--wait-timeout", WAIT],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}\noperator log:\n{}", operator.log_tail());
    assert!(
        run.stderr.contains(&format!(
            "Adopted: every ready node serves version {v1} (2/2)"
        )),
        "{run}"
    );
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn without_an_operator_the_wait_ends_at_its_timeout_saying_why() -> TestResult {
    let env = support::env("plugin-nowait").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "nowait");
    let scratch = env.scratch_dir()?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "local-s3", "s3-creds").await?;
    let mut spec = CelldFleetSpec::with_bucket(&bucket);
    spec.store_ref = Some(StoreRef {
        name: "local-s3".into(),
    });
    env.api::<CelldFleet>()
        .create(&PostParams::default(), &CelldFleet::new(FLEET, spec))
        .await?;
    let poc = poc_worker();
    let run = support::deploy_double(
        &env,
        &double,
        FLEET,
        &[
            poc.to_str().ok_or("path")?,
            "--fleet",
            FLEET,
            "--wait-timeout",
            "3s",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    for text in [
        "Waiting for the operator to read the new version",
        "is celld-operator running",
        "The version stays published",
        "--no-wait",
    ] {
        assert!(run.stderr.contains(text), "no {text:?} in\n{run}");
    }
    env.cleanup().await?;
    Ok(())
}
