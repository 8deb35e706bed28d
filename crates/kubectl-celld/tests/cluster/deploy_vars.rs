//! `deploy --vars-from-secret` against the real API server, with the test double of `celld
//! deploy` in the deploy pod: the Secrets' keys reach the deployed Worker's vars in the bucket,
//! and their values appear nowhere else (the plugin's output, the Job and its pod, Events, the
//! local project). A missing Secret or a key that cannot be a var stops the deploy before any
//! Job exists, naming the Secret and the key.

use crate::deploy::deploy_jobs;
use crate::support::{self, TestResult};
use celld_testkit::deploy_double::pointer;
use celld_testkit::{DeployDouble, TestEnv};
use k8s_openapi::ByteString;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod, Secret};
use kube::api::{DeleteParams, ListParams, PostParams};
use std::collections::BTreeMap;
use std::path::Path;

/// Values no output may show.
const API_KEY: &str = "sentinel-api-key-7f3a9c";
const DB_URL: &str = "postgres://app:sentinel-db-pass-41d2@db:5432/app";
const PASSWORD: &str = "sentinel-basic-auth-pass-e81b";

const CONFIG: &str = r#"// The web Worker.
{
  "name": "web",
  "main": "src/index.js",
  "vars": {
    "MODE": "production",
    "API_KEY": "dev-placeholder", // the cluster's value comes from a Secret
  },
}
"#;

async fn secret(env: &TestEnv, name: &str, type_: &str, data: &[(&str, &str)]) -> TestResult {
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        type_: Some(type_.into()),
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..Secret::default()
    };
    env.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await?;
    Ok(())
}

fn project(dir: &Path) -> TestResult {
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(dir.join("wrangler.jsonc"), CONFIG)?;
    std::fs::write(
        dir.join("src/index.js"),
        "export default { fetch: (_r, env) => new Response(env.MODE) };\n",
    )?;
    Ok(())
}

/// The deployed version's manifest, through the fleet pointer.
async fn deployed_manifest(env: &TestEnv, bucket: &str) -> TestResult<serde_json::Value> {
    let s3 = env.s3()?;
    let prefix = bucket
        .strip_prefix(&format!("s3://{}/", s3.bucket))
        .ok_or("bucket prefix")?;
    let pointer = s3
        .get_object(&format!("{prefix}/{}", pointer::FLEET_POINTER))
        .await?
        .ok_or("no fleet pointer")?;
    let pointer: serde_json::Value = serde_json::from_slice(&pointer)?;
    let version = pointer["prefix"].as_str().ok_or("pointer prefix")?;
    let manifest = s3
        .get_object(&format!("{prefix}/{version}/manifest.json"))
        .await?
        .ok_or("no manifest.json")?;
    Ok(serde_json::from_slice(&manifest)?)
}

#[tokio::test]
async fn deploy_merges_secrets_into_the_deployed_vars_and_shows_no_value() -> TestResult {
    let env = support::env("plugin-deploy-vars").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "deploy-vars");
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "minio", "s3-creds").await?;
    support::fleet(&env, "web", "minio", &bucket).await?;
    secret(
        &env,
        "web-vars",
        "Opaque",
        &[("API_KEY", API_KEY), ("DB_URL", DB_URL)],
    )
    .await?;
    // Not Opaque: the keys of its .data are vars all the same.
    secret(
        &env,
        "web-auth",
        "kubernetes.io/basic-auth",
        &[("username", "app"), ("password", PASSWORD)],
    )
    .await?;
    let scratch = env.scratch_dir()?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    let dir = scratch.join("worker");
    project(&dir)?;

    let run = support::deploy_double(
        &env,
        &double,
        "web",
        &[
            dir.to_str().ok_or("path")?,
            "--fleet",
            "web",
            "--vars-from-secret",
            "web-vars",
            "--vars-from-secret",
            "web-auth",
            "--keep-job",
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    let ns = env.namespace();
    for line in [
        format!("Vars from Secret {ns}/web-vars: API_KEY, DB_URL (values not shown)"),
        format!("Vars from Secret {ns}/web-auth: password, username (values not shown)"),
        "note: the Secrets' values replace API_KEY in the vars of the wrangler config".to_string(),
        "Merged 4 vars from Secret web-vars, web-auth into src/wrangler.jsonc (replacing API_KEY)"
            .to_string(),
    ] {
        assert!(run.stderr.contains(&line), "no {line:?} in\n{run}");
    }

    // The deployed Worker's vars: the config's, with the Secrets' keys merged in.
    let manifest = deployed_manifest(&env, &bucket).await?;
    assert_eq!(
        manifest["vars"],
        serde_json::json!({
            "MODE": "production",
            "API_KEY": API_KEY,
            "DB_URL": DB_URL,
            "username": "app",
            "password": PASSWORD,
        }),
        "{run}"
    );

    // No value anywhere else: the plugin's output, the Job and its pod (spec, annotations,
    // args), the namespace's Events, the local project.
    let jobs = deploy_jobs(&env, "web").await?;
    assert_eq!(jobs.len(), 1, "--keep-job keeps the Job");
    let pods = env
        .api::<Pod>()
        .list(&ListParams::default().labels("platform.celld.dev/role=deploy"))
        .await?
        .items;
    assert_eq!(pods.len(), 1);
    let events = env.api::<Event>().list(&ListParams::default()).await?.items;
    let places = [
        ("stdout", run.stdout.clone()),
        ("stderr", run.stderr.clone()),
        ("the Job", serde_json::to_string(&jobs)?),
        ("the deploy pod", serde_json::to_string(&pods)?),
        ("Events", serde_json::to_string(&events)?),
        (
            "the project",
            std::fs::read_to_string(dir.join("wrangler.jsonc"))?,
        ),
    ];
    for (place, text) in &places {
        for value in [API_KEY, "sentinel-db-pass", PASSWORD] {
            assert!(
                !text.contains(value),
                "{place} holds a Secret value:\n{text}"
            );
        }
    }
    assert_eq!(std::fs::read_to_string(dir.join("wrangler.jsonc"))?, CONFIG);
    // The pod names the Secrets, read-only.
    let spec = pods[0].spec.as_ref().ok_or("pod spec")?;
    let mounted: Vec<(String, bool)> = spec.containers[0]
        .volume_mounts
        .iter()
        .flatten()
        .filter(|m| m.name.starts_with("vars-"))
        .map(|m| (m.mount_path.clone(), m.read_only == Some(true)))
        .collect();
    assert_eq!(
        mounted,
        [
            ("/work/vars-from-secret/web-vars".to_string(), true),
            ("/work/vars-from-secret/web-auth".to_string(), true)
        ]
    );
    for job in jobs {
        let name = job.metadata.name.unwrap_or_default();
        env.api::<Job>()
            .delete(&name, &DeleteParams::background())
            .await?;
    }
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn deploy_refuses_a_missing_secret_and_a_bad_key_before_creating_a_job() -> TestResult {
    let env = support::env_with_web("plugin-deploy-vars-refuse", "deploy-vars-refuse").await?;
    let dir = env.scratch_dir()?.join("worker");
    project(&dir)?;
    let dir = dir.to_str().ok_or("path")?;
    let ns = env.namespace();

    let run = support::run(
        &env,
        &[
            "deploy",
            dir,
            "--fleet",
            "web",
            "--vars-from-secret",
            "nope",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "Secret 'nope' (--vars-from-secret) does not exist in namespace '{ns}', the fleet's: create it with: kubectl create secret generic nope -n {ns}"
        )),
        "{run}"
    );

    secret(&env, "bad-keys", "Opaque", &[("api-key", API_KEY)]).await?;
    let run = support::run(
        &env,
        &[
            "deploy",
            dir,
            "--fleet",
            "web",
            "--vars-from-secret",
            "bad-keys",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(
            "Secret bad-keys has key 'api-key', which is not a valid vars name (letters, digits and '_', not starting with a digit): rename the key in the Secret, for example to api_key; nothing was uploaded"
        ),
        "{run}"
    );
    for text in [&run.stdout, &run.stderr] {
        assert!(!text.contains(API_KEY), "{run}");
    }
    assert!(!run.stderr.contains("Created Job"), "{run}");
    assert!(deploy_jobs(&env, "web").await?.is_empty());
    env.cleanup().await?;
    Ok(())
}
