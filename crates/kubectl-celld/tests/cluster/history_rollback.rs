//! `history` and `rollback` on real bucket contents: two versions published by the test double
//! of `celld deploy` through the real `deploy`, plus an upload without manifest.json written
//! through the S3 API. The deploy pod of `history` and `rollback` runs the bucket agent
//! `celld-bucket` (kwok runs execs locally) against the local S3 server, with the credentials
//! the Job's Secret references.

use crate::poc_worker::{changed_worker, poc_worker};
use crate::support::{self, FakeTools, Run, TestResult};
use celld_api::CelldFleet;
use celld_api::labels::DEPLOYED_AT;
use celld_fixtures::pointer::pointer_json;
use celld_testkit::deploy_double::{pointer, project, version};
use celld_testkit::{DeployDouble, S3Settings, TestEnv};
use k8s_openapi::api::core::v1::Pod;

const FLEET: &str = "hist";
const SCRIPT: &str = "celld-poc-hello";
const UNFINISHED: &str = "ffffffffffffffff";

/// Runs `args` with the double's Exec rule (celld-bucket) plus this machine's curl.
async fn wired(env: &TestEnv, double: &DeployDouble, args: &[&str]) -> TestResult<Run> {
    support::with_curl(env, double, FLEET, args).await
}

async fn text(s3: &S3Settings, key: &str) -> TestResult<Option<String>> {
    Ok(s3
        .get_object(key)
        .await?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

#[tokio::test]
async fn history_lists_versions_and_rollback_moves_the_pointers_back() -> TestResult {
    let env = support::env("plugin-history").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "history");
    let prefix = bucket
        .strip_prefix(&format!("s3://{}/", s3.bucket))
        .ok_or("bucket prefix")?
        .to_string();
    let scratch = env.scratch_dir()?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "local-s3", "s3-creds").await?;
    support::fleet(&env, FLEET, "local-s3", &bucket).await?;

    // Before any deploy: nothing to list, nothing to roll back.
    let run = wired(&env, &double, &["history", FLEET]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("Current: none"), "{run}");
    let run = wired(&env, &double, &["rollback", FLEET]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("nothing is deployed"), "{run}");

    // Two versions through the real deploy, and an upload that never finished.
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
    s3.put_object(
        &format!("{prefix}/deploy/{SCRIPT}/{UNFINISHED}/src/index.js"),
        b"export default {}".to_vec(),
    )
    .await?;

    // history: newest first, the live one starred, the unfinished upload last and flagged.
    let run = wired(&env, &double, &["history", FLEET, "-o", "json"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout)?;
    let versions = doc["versions"].as_array().ok_or("versions")?;
    let ids: Vec<&str> = versions
        .iter()
        .filter_map(|v| v["version"].as_str())
        .collect();
    assert_eq!(ids, [v2.as_str(), v1.as_str(), UNFINISHED], "{run}");
    assert_eq!(doc["current"]["version"], v2.as_str());
    assert_eq!(versions[0]["current"], true);
    assert_eq!(versions[1]["current"], false);
    assert_eq!(versions[0]["script"], SCRIPT);
    assert_eq!(versions[0]["modules"], 4);
    assert!(
        versions[0]["uploaded"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{run}"
    );
    assert!(
        versions[2]["problem"]
            .as_str()
            .is_some_and(|p| p.contains("no manifest.json")),
        "{run}"
    );
    let run = wired(&env, &double, &["history", FLEET]).await?;
    assert_eq!(run.code, 0, "{run}");
    let starred = run
        .stdout
        .lines()
        .find(|l| l.starts_with('*'))
        .ok_or("no starred line")?;
    assert!(starred.contains(&v2), "{run}");
    assert!(run.stderr.contains("Deleted Job"), "{run}");

    // A version without manifest.json is refused, and nothing changes.
    let run = wired(&env, &double, &["rollback", FLEET, "--to", UNFINISHED]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("no manifest.json"), "{run}");
    let fleet_pointer = format!("{prefix}/{}", pointer::FLEET_POINTER);
    assert_eq!(
        text(&s3, &fleet_pointer).await?,
        Some(pointer_json(SCRIPT, &v2)?)
    );

    // The default rollback goes to the version before the live one: both pointers, exactly as
    // celld writes them; the fleet is annotated; the one ready node is asked to reload.
    let node = support::node_pod(&env, FLEET, "hist-0").await?;
    let run = wired(&env, &double, &["rollback", FLEET]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains(&format!(
            "Rolled back fleet {}/{FLEET} to version {v1}",
            env.namespace()
        )),
        "{run}"
    );
    assert_eq!(
        text(&s3, &fleet_pointer).await?,
        Some(pointer_json(SCRIPT, &v1)?)
    );
    let script_pointer = format!("{prefix}/{}", pointer::script_pointer(SCRIPT));
    assert_eq!(
        text(&s3, &script_pointer).await?,
        Some(pointer_json(SCRIPT, &v1)?)
    );
    // kwok's pods have no celld behind their IP: the node is reported, unreachable.
    assert!(
        run.stdout
            .contains(&format!("hist-0 ({})", support::ip(&node))),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("Reload: 0 adopted, 0 unchanged, 1 failed"),
        "{run}"
    );
    let fleet = env.api::<CelldFleet>().get(FLEET).await?;
    let stamp = fleet
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DEPLOYED_AT))
        .ok_or("no deployed-at annotation")?;
    assert!(stamp.parse::<jiff::Timestamp>().is_ok(), "{stamp}");

    // history shows v1 live now; --to goes forward again.
    let run = wired(&env, &double, &["history", FLEET, "-o", "yaml"]).await?;
    assert!(
        run.stdout
            .contains(&format!("current:\n  script: {SCRIPT}\n  version: {v1}")),
        "{run}"
    );
    let run = wired(
        &env,
        &double,
        &["rollback", FLEET, "--to", &v2, "--no-reload"],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        text(&s3, &fleet_pointer).await?,
        Some(pointer_json(SCRIPT, &v2)?)
    );

    // The node cannot load the target (HTTP 422 to the reload, from a fake curl): the pointers
    // name the target, and the rollback fails with exit code 3, naming the node, its logs and
    // the way back, which works.
    let tools = FakeTools::new(&env)?;
    tools.answer(
        &support::ip(&node),
        422,
        r#"{"ok":false,"error":"module not found: ./gone.js"}"#,
    )?;
    let run = support::command_paused(&env, FLEET, &["rollback", FLEET], async |name: String| {
        let pod = env.api::<Pod>().get(&name).await?;
        double
            .rule(&env.client(), &pod)
            .await?
            .path([
                double.bin_dir(),
                tools.bin.clone(),
                "/usr/bin".into(),
                "/bin".into(),
            ])
            .env("CELLD_FAKE_RECORD", tools.record.display().to_string())
            .apply(&env.client(), env.namespace())
            .await?;
        Ok(())
    })
    .await?;
    assert_eq!(run.code, 3, "{run}");
    assert_eq!(
        text(&s3, &fleet_pointer).await?,
        Some(pointer_json(SCRIPT, &v1)?)
    );
    let ns = env.namespace();
    for line in [
        format!(
            "error: node hist-0 of fleet {ns}/{FLEET} refused version {v1} of script {SCRIPT} (the reload got HTTP 422: module not found: ./gone.js)"
        ),
        format!("See why with: kubectl celld logs {FLEET} -n {ns}"),
        format!("go back with: kubectl celld rollback {FLEET} -n {ns} --to {v2}\n"),
    ] {
        assert!(run.stderr.contains(&line), "no {line:?} in\n{run}");
    }
    assert!(
        run.stdout
            .contains("Reload: 0 adopted, 0 unchanged, 1 failed"),
        "{run}"
    );
    let run = wired(
        &env,
        &double,
        &["rollback", FLEET, "--to", &v2, "--no-reload"],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        text(&s3, &fleet_pointer).await?,
        Some(pointer_json(SCRIPT, &v2)?)
    );

    // Another writer changes the fleet pointer between the rollback's read and its write (a
    // celld-bucket that overwrites it just before the rollback's conditional write): the
    // rollback fails and leaves the other writer's pointer.
    let racing = scratch.join("racing-bin");
    std::fs::create_dir_all(&racing)?;
    let agent = double.bin_dir().join("celld-bucket");
    support::script(
        &racing.join("celld-bucket"),
        &format!(
            r#"#!/bin/sh
if [ "$1" = put ] && [ "$2" = deploy/current.json ] && [ "$4" = --if-etag ]; then
  /usr/bin/curl -sS -o /dev/null -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --data-binary '{{"raced":true}}' "$S3_ENDPOINT/${{CELLD_BUCKET#s3://}}/deploy/current.json"
fi
exec {} "$@"
"#,
            agent.display()
        ),
    )?;
    let run = support::command_paused(
        &env,
        FLEET,
        &["rollback", FLEET, "--no-reload"],
        async |name: String| {
            let pod = env.api::<Pod>().get(&name).await?;
            double
                .rule(&env.client(), &pod)
                .await?
                .path([
                    racing.clone(),
                    double.bin_dir(),
                    "/usr/bin".into(),
                    "/bin".into(),
                ])
                .apply(&env.client(), env.namespace())
                .await?;
            Ok(())
        },
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("another deploy or rollback changed deploy/current.json"),
        "{run}"
    );
    assert_eq!(
        text(&s3, &fleet_pointer).await?.as_deref(),
        Some(r#"{"raced":true}"#)
    );
    env.cleanup().await?;
    Ok(())
}
