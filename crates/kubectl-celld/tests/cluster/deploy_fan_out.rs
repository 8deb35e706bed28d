//! Fan-out deploy on the local control plane: one build of the POC Worker published to 20
//! fleets labelled `team=payments`, ten on the S3 server through a CelldObjectStore and ten on
//! the GCS emulator with an inline bucket and a key Secret, each from its own deploy pod with
//! its own credentials (`celld` there is the deploy double, which writes what `celld deploy`
//! writes). One S3 fleet is made to fail: its store's credentials Secret holds a key the S3
//! server refuses. A fleet without the label is never touched.
//!
//! The dry run lists the 20 targets and creates no Job and no pointer. The deploy then
//! publishes the same version to 19 fleets (read back from each fleet's pointer, in S3 or GCS),
//! reports the failing fleet with celld's reason, deletes every Job and exits with the
//! partial-failure code.
//!
//! Ctrl-C in a fan-out (sent by the first fleet's fake `celld`, one fleet at a time) stops it:
//! that fleet may be published, the others were not touched, and no Job is left.

use crate::deploy::deploy_jobs;
use crate::object_stores::emulator_key;
use crate::poc_worker::poc_worker;
use crate::support::{self, FakeTools, Run, TestResult};
use celld_api::CelldFleet;
use celld_testkit::deploy_double::{pointer, project, version};
use celld_testkit::{
    Check, DeployDouble, GcsSettings, S3Settings, TestEnv, unique_name, wait_until,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{ListParams, PostParams};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// The fleets on S3 (`pay-01`..`pay-10`) and on GCS (`pay-11`..`pay-20`).
const FLEETS: usize = 20;
/// The S3 fleet whose credentials the S3 server refuses.
const FAILING: &str = "pay-07";
/// The label the fan-out selects.
const SELECTOR: &str = "team=payments";

fn name(i: usize) -> String {
    format!("pay-{i:02}")
}

fn on_gcs(fleet: &str) -> bool {
    fleet
        .strip_prefix("pay-")
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| n > FLEETS / 2)
}

/// Where each fleet keeps its Workers.
struct Buckets {
    s3: S3Settings,
    gcs: GcsSettings,
    /// The key prefix of each fleet, in its store's bucket.
    prefixes: BTreeMap<String, String>,
}

impl Buckets {
    /// The fleet pointer of `fleet`, as text; None before a deploy.
    async fn pointer(&self, fleet: &str) -> TestResult<Option<String>> {
        let key = format!("{}/{}", self.prefixes[fleet], pointer::FLEET_POINTER);
        let body = match on_gcs(fleet) {
            true => self.gcs.get(&key).await?,
            false => self.s3.get_object(&key).await?,
        };
        Ok(body.map(|b| String::from_utf8_lossy(&b).into_owned()))
    }
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

/// The 20 labelled fleets, the failing one's store, and one fleet without the label.
async fn fleets(env: &TestEnv) -> TestResult<Buckets> {
    let s3 = env.s3()?;
    let gcs = GcsSettings::load()
        .map_err(|e| format!("the GCS emulator's settings: {e} (run make cluster-up)"))?;
    support::secret(env, "s3-creds").await?;
    support::store(env, "minio", "s3-creds").await?;
    let refused = S3Settings {
        secret_access_key: "not-the-key".into(),
        ..s3.clone()
    };
    celld_fixtures::create_credentials(&env.api(), "wrong-creds", &refused).await?;
    support::store(env, "minio-wrong-key", "wrong-creds").await?;
    create::<Secret>(
        env,
        json!({"metadata": {"name": "gcs-key"}, "stringData": {"GOOGLE_SERVICE_ACCOUNT_KEY": emulator_key()}}),
    )
    .await?;
    let run = unique_name("fan-out");
    let mut prefixes = BTreeMap::new();
    for i in 1..=FLEETS {
        let fleet = name(i);
        let labels = json!({"team": "payments", "tier": if i % 2 == 0 { "even" } else { "odd" }});
        if on_gcs(&fleet) {
            let prefix = format!("{run}/{fleet}");
            create::<CelldFleet>(
                env,
                json!({"metadata": {"name": fleet, "labels": labels}, "spec": {"objectStorage": {
                    "bucket": format!("gs://{}/{prefix}", gcs.bucket),
                    "credentialsSecretRef": {"name": "gcs-key"}}}}),
            )
            .await?;
            prefixes.insert(fleet, prefix);
        } else {
            let bucket = support::bucket(&s3, &format!("fan-out-{fleet}"));
            let store = if fleet == FAILING {
                "minio-wrong-key"
            } else {
                "minio"
            };
            let mut created = support::fleet(env, &fleet, store, &bucket).await?;
            created.metadata.labels = Some(serde_json::from_value(labels)?);
            env.api::<CelldFleet>()
                .replace(&fleet, &PostParams::default(), &created)
                .await?;
            prefixes.insert(fleet, in_s3(&s3, &bucket)?);
        }
    }
    let bucket = support::bucket(&s3, "fan-out-bystander");
    support::fleet(env, "bystander", "minio", &bucket).await?;
    prefixes.insert("bystander".to_string(), in_s3(&s3, &bucket)?);
    Ok(Buckets { s3, gcs, prefixes })
}

/// The key prefix of an s3:// bucket URL in the test S3 bucket.
fn in_s3(s3: &S3Settings, bucket: &str) -> TestResult<String> {
    Ok(bucket
        .strip_prefix(&format!("s3://{}/", s3.bucket))
        .ok_or_else(|| format!("{bucket} is not in the test S3 bucket {}", s3.bucket))?
        .to_string())
}

/// Every deploy Job of the namespace.
async fn all_jobs(env: &TestEnv) -> TestResult<Vec<Job>> {
    Ok(env
        .api::<Job>()
        .list(&ListParams::default().labels("platform.celld.dev/role=deploy"))
        .await?
        .items)
}

/// The cells of `fleet`'s row of the table, cut where the header's columns start (the last,
/// RESULT, runs to the end of the line).
fn row(run: &Run, namespace: &str, fleet: &str) -> TestResult<Vec<String>> {
    let header = run
        .stdout
        .lines()
        .find(|l| l.starts_with("NAMESPACE"))
        .ok_or_else(|| format!("no table in\n{run}"))?;
    let mut starts: Vec<usize> = header
        .char_indices()
        .filter(|&(i, c)| c != ' ' && (i == 0 || header[..i].ends_with("   ")))
        .map(|(i, _)| i)
        .collect();
    starts.push(usize::MAX);
    let line = run
        .stdout
        .lines()
        .find(|l| {
            let mut words = l.split_whitespace();
            words.next() == Some(namespace) && words.next() == Some(fleet)
        })
        .ok_or_else(|| format!("no row for {namespace}/{fleet} in\n{run}"))?;
    Ok(starts
        .windows(2)
        .map(|w| {
            let end = w[1].min(line.len());
            line.get(w[0].min(end)..end)
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect())
}

#[tokio::test]
async fn one_build_goes_to_twenty_fleets_on_two_stores_and_a_failing_one_is_reported() -> TestResult
{
    let env = support::env("plugin-fan-out").await?;
    let buckets = fleets(&env).await?;
    let ns = env.namespace().to_string();
    let poc = poc_worker();
    let dir = poc.to_str().ok_or("path")?;
    let expected = version::of(&project::read(&poc)?);

    // The dry run lists the targets with their storage and creates nothing.
    let run = support::run(&env, &["deploy", dir, "--selector", SELECTOR, "--dry-run"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains("Dry run: 20 of 20 fleets would be deployed; nothing was created"),
        "{run}"
    );
    for i in 1..=FLEETS {
        let fleet = name(i);
        let cells = row(&run, &ns, &fleet)?;
        assert!(
            cells[2].starts_with(if on_gcs(&fleet) { "gs://" } else { "s3://" }),
            "{cells:?}"
        );
        assert_eq!(
            cells.last().map(String::as_str),
            Some("would deploy"),
            "{cells:?}"
        );
    }
    assert!(!run.stdout.contains("bystander"), "{run}");
    assert!(
        all_jobs(&env).await?.is_empty(),
        "a dry run creates no Job:\n{run}"
    );
    for i in 1..=FLEETS {
        assert_eq!(
            buckets.pointer(&name(i)).await?,
            None,
            "a dry run publishes nothing"
        );
    }

    // The deploy: each pod runs the double with its Job's credentials (plus, on GCS, the
    // emulator's address).
    let double = DeployDouble::new(env.scratch_dir()?.join("double")).await?;
    let gcs_env = buckets.gcs.client_env();
    let run = support::fan_out_wired(
        &env,
        &["deploy", dir, "--selector", SELECTOR, "--concurrency", "5"],
        async |fleet: String, pod: String, _pid: u32| {
            let pod = env.api::<Pod>().get(&pod).await?;
            let mut rule = double.rule(&env.client(), &pod).await?;
            if on_gcs(&fleet) {
                for (var, value) in &gcs_env {
                    rule = rule.env(*var, value.clone());
                }
            }
            rule.apply(&env.client(), env.namespace()).await?;
            Ok(())
        },
    )
    .await?;

    assert_eq!(run.code, 4, "a partial failure exits 4:\n{run}");
    assert!(
        run.stderr.contains("Deploying to 20 fleets, 5 at a time"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains(&format!("Deployed to 19 of 20 fleets (version {expected})")),
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!(
            "error: 1 of 20 fleets were not deployed: {ns}/{FAILING}; the table above gives each fleet's reason. Once fixed, deploy to it again with: kubectl celld deploy {dir} --fleets {ns}/{FAILING}"
        )),
        "{run}"
    );
    for i in 1..=FLEETS {
        let fleet = name(i);
        let cells = row(&run, &ns, &fleet)?;
        let pointer = buckets.pointer(&fleet).await?;
        if fleet == FAILING {
            assert_eq!(cells[3], "-", "{cells:?}");
            let result = cells.last().ok_or("no result")?;
            assert!(
                result.starts_with("failed: celld deploy failed with exit code 1; nothing was made live: celld-deploy-double: error:"),
                "{cells:?}\n{run}"
            );
            assert_eq!(pointer, None, "{fleet} published nothing");
        } else {
            assert_eq!(cells[3], expected, "{fleet}: {cells:?}");
            assert_eq!(
                cells.last().map(String::as_str),
                Some("published"),
                "{fleet}: {cells:?}\n{run}"
            );
            let pointer = pointer.ok_or_else(|| format!("{fleet} has no pointer\n{run}"))?;
            assert!(pointer.contains(&expected), "{fleet}: {pointer}");
            let fleet_object = env.api::<CelldFleet>().get(&fleet).await?;
            assert!(
                crate::deploy::deployed_at(&fleet_object).is_some(),
                "{fleet} annotated"
            );
        }
        assert!(
            run.stderr
                .contains(&format!("[{ns}/{fleet}] Created Job {ns}/{fleet}-deploy-")),
            "{fleet} got its own deploy pod:\n{run}"
        );
    }
    // Each fleet's output is prefixed; celld's own lines too.
    assert!(
        run.stderr.contains(&format!(
            "[{ns}/pay-12] Published version {expected} of celld-poc-hello"
        )),
        "{run}"
    );
    assert!(!run.stderr.contains("bystander"), "{run}");
    assert!(deploy_jobs(&env, "bystander").await?.is_empty());
    assert_eq!(buckets.pointer("bystander").await?, None);
    wait_until(
        "every deploy Job to be deleted",
        Duration::from_secs(60),
        || async {
            match all_jobs(&env).await {
                Ok(jobs) if jobs.is_empty() => Check::Done(()),
                Ok(jobs) => Check::Pending(format!("{} Jobs left", jobs.len())),
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn ctrl_c_in_a_fan_out_says_what_each_fleet_was_left_with() -> TestResult {
    let env = support::env("plugin-fan-out-int").await?;
    let s3 = env.s3()?;
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "minio", "s3-creds").await?;
    for fleet in ["web-a", "web-b", "web-c"] {
        support::fleet(
            &env,
            fleet,
            "minio",
            &support::bucket(&s3, &format!("fan-out-int-{fleet}")),
        )
        .await?;
    }
    let tools = FakeTools::new(&env)?;
    let dir = env.scratch_dir()?.join("worker");
    crate::deploy::worker(&dir)?;
    let ns = env.namespace().to_string();

    let run = support::fan_out_wired(
        &env,
        &[
            "deploy",
            dir.to_str().ok_or("path")?,
            "--fleets",
            "web-a,web-b,web-c",
            "--concurrency",
            "1",
        ],
        async |_fleet: String, pod: String, pid: u32| {
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
            "error: interrupted: 1 interrupted while celld deploy ran, so the version may be published (check with kubectl celld status): {ns}/web-a; 2 untouched: {ns}/web-b, {ns}/web-c"
        )),
        "{run}"
    );
    let cells = row(&run, &ns, "web-a")?;
    assert_eq!(
        cells.last().map(String::as_str),
        Some("interrupted while celld deploy ran: the version may be published"),
        "{run}"
    );
    for fleet in ["web-b", "web-c"] {
        let cells = row(&run, &ns, fleet)?;
        assert_eq!(
            cells.last().map(String::as_str),
            Some("untouched (interrupted before its turn)"),
            "{run}"
        );
        assert!(!run.stderr.contains(&format!("[{ns}/{fleet}]")), "{run}");
    }
    assert!(
        run.stderr.contains(&format!("[{ns}/web-a] Deleted Job")),
        "{run}"
    );
    wait_until(
        "every deploy Job to be deleted",
        Duration::from_secs(60),
        || async {
            match all_jobs(&env).await {
                Ok(jobs) if jobs.is_empty() => Check::Done(()),
                Ok(jobs) => Check::Pending(format!("{} Jobs left", jobs.len())),
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    env.cleanup().await?;
    Ok(())
}
