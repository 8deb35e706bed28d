//! The whole deploy loop: the operator runs (a process watching this test's namespace only) and
//! the deploy pod's `celld` is celld-deploy-double, which writes to the local S3 server what
//! `celld deploy` writes. A fleet waits at 0 nodes without a deployment pointer; the real plugin
//! binary deploys `poc/worker`; the pointer names the double's version; the operator scales the
//! fleet to its replicas and it becomes Ready; `status` shows the version. A deploy of changed
//! sources publishes a new version. A deploy that loses the compare-and-swap race on the
//! pointer fails, saying to re-run, and the serving version stays.

use crate::poc_worker::poc_worker;
use crate::support::{self, Run, TestResult};
use celld_api::{CelldFleet, CelldFleetSpec};
use celld_fixtures::pointer::pointer_json;
use celld_fixtures::{Launch, OperatorProcess};
use celld_testkit::deploy_double::{hold, pointer, project, version};
use celld_testkit::{Check, DeployDouble, S3Settings, TestEnv, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use std::path::Path;
use std::time::Duration;

const FLEET: &str = "hello";
const REPLICAS: i32 = 2;
/// The script name in poc/worker/wrangler.jsonc.
const SCRIPT: &str = "celld-poc-hello";
const WAIT: Duration = Duration::from_secs(90);

fn copy_dir(from: &Path, to: &Path) -> TestResult {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The version the double computes for the project in `dir`.
fn expected_version(dir: &Path) -> TestResult<String> {
    Ok(version::of(&project::read(dir)?))
}

/// The object at `rel` under the fleet's prefix, if any.
async fn object(s3: &S3Settings, prefix: &str, rel: &str) -> TestResult<Option<Vec<u8>>> {
    Ok(s3.get_object(&format!("{prefix}/{rel}")).await?)
}

/// The fleet pointer, as text.
async fn fleet_pointer(s3: &S3Settings, prefix: &str) -> TestResult<Option<String>> {
    Ok(object(s3, prefix, pointer::FLEET_POINTER)
        .await?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Waits until the fleet's StatefulSet asks for `replicas` nodes.
async fn wait_replicas(env: &TestEnv, replicas: i32, operator: &OperatorProcess) -> TestResult {
    let api = env.api::<StatefulSet>();
    wait_until(
        format!("StatefulSet {FLEET} to ask for {replicas} nodes"),
        WAIT,
        || async {
            match api.get_opt(FLEET).await {
                Ok(Some(s)) => {
                    let want = s.spec.as_ref().and_then(|s| s.replicas);
                    if want == Some(replicas) {
                        Check::Done(())
                    } else {
                        Check::Pending(format!("spec.replicas {want:?}"))
                    }
                }
                other => Check::Pending(format!("{other:?}")),
            }
        },
    )
    .await
    .map_err(|e| format!("{e}\noperator log:\n{}", operator.log_tail()))?;
    Ok(())
}

/// Waits until the fleet's condition Ready is True.
async fn wait_ready(env: &TestEnv, operator: &OperatorProcess) -> TestResult {
    let api = env.api::<CelldFleet>();
    wait_until(format!("fleet {FLEET} to be Ready"), WAIT, || async {
        match api.get(FLEET).await {
            Ok(f) => {
                let status = f.status.unwrap_or_default();
                match celld_api::conditions::find(&status.conditions, "Ready") {
                    Some(c) if c.status == "True" => Check::Done(()),
                    c => Check::Pending(format!("Ready {c:?}")),
                }
            }
            Err(e) => Check::Pending(e.to_string()),
        }
    })
    .await
    .map_err(|e| format!("{e}\noperator log:\n{}", operator.log_tail()))?;
    Ok(())
}

/// What `kubectl-celld status` prints for a version of the POC Worker.
fn worker_line(version: &str) -> String {
    format!("Worker:      version {version} (script {SCRIPT}")
}

/// Waits until `kubectl-celld status` shows `version`; returns that output.
async fn wait_status(env: &TestEnv, version: &str) -> TestResult<Run> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let run = support::run(env, &["status", FLEET]).await?;
        if run.code == 0 && run.stdout.contains(&worker_line(version)) {
            return Ok(run);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("status never showed version {version}:\n{run}").into());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The version the double reported in the plugin's output.
fn reported_version(run: &Run) -> Option<String> {
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix("Version "))
        .map(|v| v.trim().to_string())
}

/// Checks what a successful deploy of `dir` left in the bucket; returns its version.
async fn check_published(
    run: &Run,
    dir: &Path,
    s3: &S3Settings,
    prefix: &str,
) -> TestResult<String> {
    assert_eq!(run.code, 0, "{run}");
    let version = expected_version(dir)?;
    assert_eq!(
        reported_version(run).as_deref(),
        Some(version.as_str()),
        "{run}"
    );
    let want = pointer_json(SCRIPT, &version)?;
    assert_eq!(
        fleet_pointer(s3, prefix).await?.as_deref(),
        Some(want.as_str()),
        "{run}"
    );
    let script = object(s3, prefix, &pointer::script_pointer(SCRIPT)).await?;
    assert_eq!(script.as_deref(), Some(want.as_bytes()), "{run}");
    // The modules as they are (no bundling), and the manifest.
    let module = object(
        s3,
        prefix,
        &format!("deploy/{SCRIPT}/{version}/src/greeting.js"),
    )
    .await?;
    assert_eq!(
        module,
        Some(std::fs::read(dir.join("src/greeting.js"))?),
        "{run}"
    );
    let manifest = object(
        s3,
        prefix,
        &format!("deploy/{SCRIPT}/{version}/manifest.json"),
    )
    .await?
    .ok_or("no manifest.json")?;
    let manifest: serde_json::Value = serde_json::from_slice(&manifest)?;
    assert_eq!(manifest["version"], version.as_str());
    assert_eq!(manifest["script"], SCRIPT);
    assert_eq!(manifest["main"], "src/index.js");
    let paths: Vec<&str> = manifest["modules"]
        .as_array()
        .ok_or("modules")?
        .iter()
        .filter_map(|m| m["path"].as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "src/greeting.js",
            "src/index.js",
            "src/respond.js",
            "src/routes.js"
        ]
    );
    Ok(version)
}

async fn create_fleet(env: &TestEnv, bucket: &str) -> TestResult {
    support::secret(env, "s3-creds").await?;
    support::store(env, "local-s3", "s3-creds").await?;
    let mut spec = CelldFleetSpec::with_bucket(bucket);
    spec.store_ref = Some(celld_api::StoreRef {
        name: "local-s3".into(),
    });
    spec.replicas = REPLICAS;
    env.api::<CelldFleet>()
        .create(&PostParams::default(), &CelldFleet::new(FLEET, spec))
        .await?;
    Ok(())
}

#[tokio::test]
async fn deploy_publishes_the_pointer_the_operator_scales_the_fleet_and_a_lost_race_changes_nothing()
-> TestResult {
    let env = support::env("plugin-deploy-loop").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "deploy-loop");
    let prefix = bucket
        .strip_prefix(&format!("s3://{}/", s3.bucket))
        .ok_or("bucket prefix")?
        .to_string();
    let scratch = env.scratch_dir()?;
    let launch = Launch::on_namespace(env.namespace(), scratch.join("operator.log")).await?;
    let operator = OperatorProcess::start_leading(launch).await?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    create_fleet(&env, &bucket).await?;

    // Without a pointer the operator holds the fleet at 0 nodes.
    wait_replicas(&env, 0, &operator).await?;
    assert_eq!(fleet_pointer(&s3, &prefix).await?, None);

    // The first deploy, of the repository's POC Worker.
    let poc = poc_worker();
    let poc_arg = poc.to_str().ok_or("path")?;
    let run = support::deploy_double(&env, &double, FLEET, &[poc_arg, "--fleet", FLEET]).await?;
    let v1 = check_published(&run, &poc, &s3, &prefix).await?;
    // The double's PATH has no curl: no celld runs on kwok's nodes, so nothing is reloaded.
    assert!(run.stderr.contains("has no curl"), "{run}");
    wait_replicas(&env, REPLICAS, &operator).await?;
    wait_ready(&env, &operator).await?;
    let status = wait_status(&env, &v1).await?;
    assert!(
        status.stdout.contains(&format!("Replicas:    {REPLICAS}")),
        "{status}"
    );

    // A second deploy of changed sources: a new version, which status shows.
    let worker = scratch.join("worker");
    copy_dir(&poc, &worker)?;
    let greeting = worker.join("src/greeting.js");
    let mut text = std::fs::read_to_string(&greeting)?;
    text.push_str("// second version\n");
    std::fs::write(&greeting, text)?;
    let worker_arg = worker.to_str().ok_or("path")?;
    let run = support::deploy_double(&env, &double, FLEET, &[worker_arg, "--fleet", FLEET]).await?;
    let v2 = check_published(&run, &worker, &s3, &prefix).await?;
    assert_ne!(v1, v2);
    wait_status(&env, &v2).await?;
    wait_ready(&env, &operator).await?;

    // A third deploy loses the race for the pointer: it holds after reading the pointer's ETag,
    // another writer re-publishes the serving version (other bytes, same meaning), then the
    // deploy's compare-and-swap write fails.
    let mut text = std::fs::read_to_string(&greeting)?;
    text.push_str("// third version, never live\n");
    std::fs::write(&greeting, text)?;
    let v3 = expected_version(&worker)?;
    let hold_dir = scratch.join("hold");
    let serving = serde_json::to_vec_pretty(&serde_json::json!({
        "version": v2, "prefix": format!("deploy/{SCRIPT}/{v2}"), "script_name": SCRIPT, "rollout": {"percent": 100},
    }))?;
    let args = [worker_arg, "--fleet", FLEET];
    let deploying = support::deploy_paused(&env, FLEET, &args, async |name: String| {
        let pod = env.api::<Pod>().get(&name).await?;
        double
            .rule(&env.client(), &pod)
            .await?
            .env(hold::HOLD_ENV, hold_dir.display().to_string())
            .apply(&env.client(), env.namespace())
            .await?;
        Ok(())
    });
    let racing = async {
        let held = hold_dir.join(hold::HELD_FILE);
        wait_until(
            "the deploy to hold before its pointer write",
            WAIT,
            || async {
                match std::fs::read_to_string(&held) {
                    Ok(text) => Check::Done(text),
                    Err(e) => Check::Pending(e.to_string()),
                }
            },
        )
        .await?;
        s3.put_object(
            &format!("{prefix}/{}", pointer::FLEET_POINTER),
            serving.clone(),
        )
        .await?;
        std::fs::write(hold_dir.join(hold::RELEASE_FILE), "")?;
        TestResult::Ok(())
    };
    let (run, raced) = tokio::join!(deploying, racing);
    let run = run?;
    raced.map_err(|e| format!("{e}\n{run}"))?;
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("another deploy changed"), "{run}");
    assert!(
        run.stderr
            .contains(&format!("version {v3} was NOT made live")),
        "{run}"
    );
    assert!(run.stderr.contains("re-run the deploy"), "{run}");
    assert!(run.stderr.contains("nothing was made live"), "{run}");
    // The pointer is the other writer's; nodes keep serving v2; status still shows v2.
    assert_eq!(
        fleet_pointer(&s3, &prefix).await?.map(String::into_bytes),
        Some(serving)
    );
    tokio::time::sleep(Duration::from_secs(2 * Launch::RESYNC_SECONDS + 1)).await;
    let status = wait_status(&env, &v2).await?;
    assert!(!status.stdout.contains(&v3), "{status}");
    let fleet = env.api::<CelldFleet>().get(FLEET).await?;
    let deployed = fleet.status.and_then(|s| s.deployment).map(|d| d.version);
    assert_eq!(deployed.as_deref(), Some(v2.as_str()));

    operator.stop().await;
    env.cleanup().await?;
    Ok(())
}
