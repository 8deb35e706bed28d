//! `deploy`, `status`, `history` and `rollback` on gs:// and az:// fleets against the local GCS
//! (fake-gcs-server) and Azure Blob (Azurite) emulators, with a credentials Secret or workload
//! identity, and `deploy` and `status` on an s3:// fleet without a credentials Secret.
//!
//! In the deploy pod, `celld` is the test double and `celld-bucket` the real bucket agent, both
//! run by kwok with the pod's own environment (the keys of the fleet's Secret) plus the variable
//! that points their client at the emulator. The operator runs on the test's namespace and
//! reads the pointers at the emulators itself, so what `status` shows was read independently of
//! the plugin's writes.

use crate::poc_worker::{changed_worker, poc_worker};
use crate::support::{self, Run, TestResult};
use celld_api::CelldFleet;
use celld_fixtures::{Launch, OperatorProcess};
use celld_testkit::deploy_double::{project, version};
use celld_testkit::{
    AzureSettings, Check, DeployDouble, GcsSettings, TestEnv, unique_name, wait_until,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Secret, ServiceAccount};
use kube::api::{ListParams, PostParams};
use serde_json::json;
use std::time::Duration;

const FLEET: &str = "web";

/// A service-account key the GCS client takes without asking Google for a token (the
/// emulator authenticates nothing).
pub fn emulator_key() -> String {
    json!({"private_key": "unused", "private_key_id": "k1", "client_email": "celld@celld-test.iam.gserviceaccount.com", "disable_oauth": true}).to_string()
}

async fn create<K>(env: &TestEnv, object: serde_json::Value) -> TestResult
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let object: K = serde_json::from_value(object)?;
    env.api::<K>()
        .create(&PostParams::default(), &object)
        .await?;
    Ok(())
}

/// Runs a command that starts a deploy pod (`args` from the command's name on) with the
/// double's Exec rule plus `extra` environment (the emulator's address, or a stand-in for the
/// identity a cloud's webhook would give the pod).
async fn wired(
    env: &TestEnv,
    double: &DeployDouble,
    args: &[&str],
    extra: &[(&'static str, String)],
) -> TestResult<Run> {
    support::command_paused(env, FLEET, args, async |name: String| {
        let pod = env.api::<Pod>().get(&name).await?;
        let mut rule = double.rule(&env.client(), &pod).await?;
        for (name, value) in extra {
            rule = rule.env(*name, value.clone());
        }
        rule.apply(&env.client(), env.namespace()).await?;
        Ok(())
    })
    .await
}

/// `kubectl celld status` until it shows `version` (the operator reads the pointer itself).
async fn wait_status(env: &TestEnv, version: &str, operator: &OperatorProcess) -> TestResult<Run> {
    let found = wait_until(
        format!("kubectl celld status {FLEET} to show version {version}"),
        Duration::from_secs(60),
        || async {
            match support::run(env, &["status", FLEET]).await {
                Ok(run) if run.code == 0 && run.stdout.contains(version) => Check::Done(run),
                Ok(run) => Check::Pending(run.to_string()),
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await;
    found.map_err(|e| format!("{e}\n--- operator log\n{}", operator.log_tail()).into())
}

/// The whole cycle on one fleet: two deploys, status, history, rollback to the first.
async fn deploy_history_rollback(
    env: &TestEnv,
    extra: &[(&'static str, String)],
    bucket: &str,
    storage_lines: &[&str],
    operator: &OperatorProcess,
) -> TestResult {
    let scratch = env.scratch_dir()?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    let poc = poc_worker();
    let worker = changed_worker(&scratch)?;
    let (v1, v2) = (
        version::of(&project::read(&poc)?),
        version::of(&project::read(&worker)?),
    );

    for dir in [&poc, &worker] {
        let run = wired(
            env,
            &double,
            &["deploy", dir.to_str().ok_or("path")?, "--fleet", FLEET],
            extra,
        )
        .await?;
        assert_eq!(run.code, 0, "{run}");
        assert!(run.stderr.contains(&format!("bucket {bucket}")), "{run}");
    }

    let run = wait_status(env, &v2, operator).await?;
    for line in storage_lines {
        assert!(run.stdout.contains(line), "{line:?} in\n{run}");
    }

    let run = wired(env, &double, &["history", FLEET, "-o", "json"], extra).await?;
    assert_eq!(run.code, 0, "{run}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout)?;
    let ids: Vec<&str> = doc["versions"]
        .as_array()
        .ok_or("versions")?
        .iter()
        .filter_map(|v| v["version"].as_str())
        .collect();
    assert_eq!(ids, [v2.as_str(), v1.as_str()], "{run}");
    assert_eq!(doc["current"]["version"], v2.as_str(), "{run}");
    assert_eq!(doc["bucket"], bucket, "{run}");

    let run = wired(env, &double, &["rollback", FLEET, "--no-reload"], extra).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains(&format!("to version {v1}")), "{run}");
    wait_status(env, &v1, operator).await?;

    // history agrees with what the operator read.
    let run = wired(env, &double, &["history", FLEET, "-o", "json"], extra).await?;
    let doc: serde_json::Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["current"]["version"], v1.as_str(), "{run}");
    Ok(())
}

/// A test namespace and an operator on it that reads gs:// and az:// buckets at the emulators,
/// with `identity` in its environment (what its default credential chain finds), which it may
/// use for the fleets of that namespace.
async fn start(
    test: &str,
    identity: &[(&str, String)],
) -> TestResult<(TestEnv, OperatorProcess, GcsSettings, AzureSettings)> {
    let env = support::env(test).await?;
    let gcs = GcsSettings::load()
        .map_err(|e| format!("the GCS emulator's settings: {e} (run make cluster-up)"))?;
    let azure = AzureSettings::load()
        .map_err(|e| format!("the Azure Blob emulator's settings: {e} (run make cluster-up)"))?;
    let mut launch = Launch::on_namespace(env.namespace(), env.scratch_dir()?.join("operator.log"))
        .await?
        .emulators(&gcs, &azure);
    // Fleets of this namespace without a credentials Secret are read with that identity.
    launch = launch.env("OWN_IDENTITY_NAMESPACES", env.namespace().to_string());
    for (name, value) in identity {
        launch = launch.env(*name, value.clone());
    }
    let operator = OperatorProcess::start_leading(launch).await?;
    Ok((env, operator, gcs, azure))
}

#[tokio::test]
async fn a_gcs_fleet_deploys_shows_lists_and_rolls_back() -> TestResult {
    let (env, operator, gcs, _) = start("plugin-gcs", &[]).await?;
    create::<Secret>(
        &env,
        json!({"metadata": {"name": "gcs-key"}, "stringData": {"GOOGLE_SERVICE_ACCOUNT_KEY": emulator_key()}}),
    )
    .await?;
    let bucket = format!("gs://{}/{}", gcs.bucket, unique_name("plugin-gcs"));
    create::<CelldFleet>(
        &env,
        json!({"metadata": {"name": FLEET}, "spec": {"objectStorage": {"bucket": bucket, "credentialsSecretRef": {"name": "gcs-key"}}}}),
    )
    .await?;
    deploy_history_rollback(
        &env,
        &gcs.client_env(),
        &bucket,
        &[
            "Google Cloud Storage",
            "credentials from Secret gcs-key (exists)",
        ],
        &operator,
    )
    .await?;
    operator.stop().await;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn an_azure_fleet_deploys_shows_lists_and_rolls_back() -> TestResult {
    let (env, operator, _, azure) = start("plugin-azure", &[]).await?;
    create::<Secret>(
        &env,
        json!({"metadata": {"name": "azure-key"}, "stringData": {"AZURE_STORAGE_ACCOUNT_KEY": azure.key}}),
    )
    .await?;
    let bucket = format!("az://{}/{}", azure.container, unique_name("plugin-azure"));
    create::<CelldFleet>(
        &env,
        json!({"metadata": {"name": FLEET}, "spec": {"objectStorage": {"bucket": bucket, "azureStorageAccount": azure.account, "credentialsSecretRef": {"name": "azure-key"}}}}),
    )
    .await?;
    deploy_history_rollback(
        &env,
        &azure.client_env(),
        &bucket,
        &[
            &format!("Azure Blob Storage, storage account {}", azure.account),
            "credentials from Secret azure-key (exists)",
        ],
        &operator,
    )
    .await?;
    operator.stop().await;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn an_s3_fleet_without_a_secret_deploys_under_its_service_account() -> TestResult {
    let s3 = celld_testkit::S3Settings::load()?;
    // The operator's own identity (IRSA on EKS): here the emulator's keys in its environment.
    let identity = [
        ("AWS_ACCESS_KEY_ID", s3.access_key_id.clone()),
        ("AWS_SECRET_ACCESS_KEY", s3.secret_access_key.clone()),
    ];
    let (env, operator, _, _) = start("plugin-s3-identity", &identity).await?;
    create::<ServiceAccount>(&env, json!({"metadata": {"name": "celld-irsa"}})).await?;
    let bucket = support::bucket(&s3, "s3-identity");
    create::<CelldFleet>(
        &env,
        json!({"metadata": {"name": FLEET}, "spec": {
            "objectStorage": {"bucket": bucket, "endpoint": s3.endpoint, "region": s3.region, "allowHTTP": true},
            "serviceAccountName": "celld-irsa"}}),
    )
    .await?;
    let scratch = env.scratch_dir()?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    // The pod gets no key: on EKS the webhook would give it the role's token. Here the Exec
    // rule stands in for that identity with the emulator's keys; the Job itself carries none.
    let poc = poc_worker();
    let run = support::command_paused(
        &env,
        FLEET,
        &["deploy", poc.to_str().ok_or("path")?, "--fleet", FLEET],
        async |name: String| {
            let pod = env.api::<Pod>().get(&name).await?;
            let spec = pod.spec.clone().ok_or("pod spec")?;
            assert_eq!(spec.service_account_name.as_deref(), Some("celld-irsa"));
            let names: Vec<String> = spec.containers[0]
                .env
                .iter()
                .flatten()
                .map(|e| e.name.clone())
                .collect();
            assert_eq!(
                names,
                [
                    "HOME",
                    "TMPDIR",
                    "CELLD_BUCKET",
                    "AWS_REGION",
                    "S3_ENDPOINT"
                ],
                "exactly the nodes' env, no key"
            );
            let jobs = env
                .api::<Job>()
                .list(&ListParams::default().labels("platform.celld.dev/role=deploy"))
                .await?;
            let job_sa = jobs.items[0]
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|s| s.service_account_name.clone());
            assert_eq!(job_sa.as_deref(), Some("celld-irsa"));
            let mut rule = double.rule(&env.client(), &pod).await?;
            for (name, value) in &identity {
                rule = rule.env(*name, value.clone());
            }
            rule.apply(&env.client(), env.namespace()).await?;
            Ok(())
        },
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stderr.contains("(inline, workload identity)"), "{run}");
    let run = wired(&env, &double, &["history", FLEET], &identity).await?;
    assert_eq!(run.code, 0, "{run}");
    let version = version::of(&project::read(&poc)?);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with('*') && l.contains(&version)),
        "{run}"
    );
    // The operator read the pointer the deploy published with its own identity.
    let run = wait_status(&env, &version, &operator).await?;
    assert!(
        run.stdout
            .contains("credentials: workload identity through ServiceAccount celld-irsa"),
        "{run}"
    );
    operator.stop().await;
    env.cleanup().await?;
    Ok(())
}

/// The whole cycle on a fleet without a credentials Secret under the ServiceAccount `sa`: the
/// operator and the deploy pods both get `identity` the way a cloud's webhook or metadata
/// service would give it to them.
async fn under_workload_identity(
    test: &str,
    identity: &[(&'static str, String)],
    object_storage: serde_json::Value,
    client_env: Vec<(&'static str, String)>,
    storage_line: &str,
) -> TestResult {
    let (env, operator, _, _) = start(test, identity).await?;
    create::<ServiceAccount>(&env, json!({"metadata": {"name": "celld-wi"}})).await?;
    let bucket = object_storage["bucket"]
        .as_str()
        .ok_or("objectStorage.bucket")?
        .to_string();
    create::<CelldFleet>(
        &env,
        json!({"metadata": {"name": FLEET}, "spec": {"objectStorage": object_storage, "serviceAccountName": "celld-wi"}}),
    )
    .await?;
    let mut extra = client_env;
    extra.extend(identity.iter().cloned());
    deploy_history_rollback(
        &env,
        &extra,
        &bucket,
        &[
            storage_line,
            "credentials: workload identity through ServiceAccount celld-wi",
        ],
        &operator,
    )
    .await?;
    operator.stop().await;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn a_gcs_fleet_under_workload_identity_deploys_shows_lists_and_rolls_back() -> TestResult {
    let gcs = GcsSettings::load()?;
    let bucket = format!("gs://{}/{}", gcs.bucket, unique_name("plugin-gcs-wi"));
    under_workload_identity(
        "plugin-gcs-wi",
        &[("GOOGLE_SERVICE_ACCOUNT_KEY", emulator_key())],
        json!({"bucket": bucket}),
        gcs.client_env(),
        "Google Cloud Storage",
    )
    .await
}

#[tokio::test]
async fn an_azure_fleet_under_workload_identity_deploys_shows_lists_and_rolls_back() -> TestResult {
    let azure = AzureSettings::load()?;
    let bucket = format!(
        "az://{}/{}",
        azure.container,
        unique_name("plugin-azure-wi")
    );
    under_workload_identity(
        "plugin-azure-wi",
        &[("AZURE_STORAGE_ACCOUNT_KEY", azure.key.clone())],
        json!({"bucket": bucket, "azureStorageAccount": azure.account}),
        azure.client_env(),
        &format!("Azure Blob Storage, storage account {}", azure.account),
    )
    .await
}
