//! `preview` against the local control plane, with the operator running (a process watching
//! the test's namespace, reaching the nodes' API through a stand-in) and the test double of
//! `celld deploy` in the deploy pod: `create` makes a preview of fleet `web` whose own fleet
//! serves the deployed Worker and prints its URL; `list` and `status` show it; `create` run
//! again deploys a new version to the same preview; `delete --wait` returns once the preview,
//! its fleet and its data are gone; a preview past its TTL is replaced by the next `create`.
//! Without an operator: a fleet without spec.previews and a
//! TTL above the fleet's maximum are refused naming the field, a missing preview is named
//! with similar ones, and preview names complete.

use crate::poc_worker::{changed_worker, poc_worker};
use crate::support::{self, Run, TestResult};
use celld_api::{CelldFleet, CelldFleetSpec, CelldPreview, PreviewPhase, StoreRef};
use celld_fixtures::{Launch, NodeDouble, OperatorProcess};
use celld_testkit::deploy_double::{project, version};
use celld_testkit::{Check, DeployDouble, S3Settings, TestEnv, wait_until};
use kube::api::{DeleteParams, PostParams};
use std::time::Duration;

const PREVIEW: &str = "pr-1";
const URL: &str = "http://pr-1.preview.example.com/";
/// How long the plugin and the test wait for the operator.
const WAIT: &str = "120s";
const WAITING: Duration = Duration::from_secs(120);

/// The fleets of a test: `web` allowing previews (TTL 1h, at most 2h) and `api` without
/// spec.previews, on the store `local-s3`; returns the previews' bucket prefix.
async fn fleets(env: &TestEnv, s3: &S3Settings, test: &str) -> TestResult<String> {
    support::secret(env, "s3-creds").await?;
    support::store(env, "local-s3", "s3-creds").await?;
    let bucket = support::bucket(s3, test);
    let previews = format!("{bucket}-previews");
    for (name, allow) in [("web", true), ("api", false)] {
        let mut spec = CelldFleetSpec::with_bucket(format!("{bucket}-{name}"));
        spec.store_ref = Some(StoreRef {
            name: "local-s3".into(),
        });
        spec.image = "ghcr.io/denoland/celld:v0.6.1".into();
        if allow {
            spec.previews = Some(serde_json::from_value(serde_json::json!({
                "baseDomain": "preview.example.com",
                "bucket": previews,
                "ingressClass": "nginx",
                "ttl": "1h",
                "maxTtl": "2h",
                "credentials": {"storeRef": {"name": "local-s3"}},
            }))?);
        }
        env.api::<CelldFleet>()
            .create(&PostParams::default(), &CelldFleet::new(name, spec))
            .await?;
    }
    let key_prefix = previews
        .strip_prefix(&format!("s3://{}/", s3.bucket))
        .ok_or("the previews bucket is in the test bucket")?;
    Ok(format!("{key_prefix}/{}/{PREVIEW}", env.namespace()))
}

/// Runs `preview create` (args after `create`), with the deploy double wired into the deploy
/// pod of the preview's fleet.
async fn create(env: &TestEnv, double: &DeployDouble, args: &[&str]) -> TestResult<Run> {
    let mut full = vec!["preview", "create"];
    full.extend_from_slice(args);
    support::command_paused(env, PREVIEW, &full, async |pod: String| {
        double.wire(&env.client(), env.namespace(), &pod).await?;
        Ok(())
    })
    .await
}

/// The preview as read now.
async fn read(env: &TestEnv) -> TestResult<Option<CelldPreview>> {
    Ok(env.api::<CelldPreview>().get_opt(PREVIEW).await?)
}

#[tokio::test]
async fn create_serves_the_worker_at_its_url_list_and_status_show_it_delete_removes_it_all()
-> TestResult {
    let env = support::env("plugin-preview").await?;
    let ns = env.namespace().to_string();
    let s3 = env.s3()?;
    let scratch = env.scratch_dir()?;
    let poc = poc_worker();
    let v1 = version::of(&project::read(&poc)?);
    let nodes = NodeDouble::start("0.6.1", &v1).await?;
    let operator = operator(&env, &nodes).await?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    let prefix = fleets(&env, &s3, "preview").await?;
    let poc_dir = poc.to_str().ok_or("path")?;

    let run = create(
        &env,
        &double,
        &[
            PREVIEW,
            "--fleet",
            "web",
            poc_dir,
            "--wait",
            "--wait-timeout",
            WAIT,
        ],
    )
    .await?;
    let log = || operator.log_tail();
    assert_eq!(run.code, 0, "{run}\noperator log:\n{}", log());
    assert_eq!(run.stdout.lines().last(), Some(URL), "{run}");
    assert!(
        run.stderr.contains(&format!(
            "Deploying: kubectl celld deploy {poc_dir} --fleet {PREVIEW} --wait-timeout 120000ms -n {ns}"
        )),
        "{run}"
    );
    assert!(
        run.stderr
            .contains(&format!("CelldPreview {ns}/{PREVIEW} is Ready")),
        "{run}"
    );
    // The preview serves the deployed version from a fleet of its own, whose bucket pointer
    // under the preview's prefix names that version.
    let preview = read(&env).await?.ok_or("no preview")?;
    let status = preview.status.clone().ok_or("no status")?;
    assert_eq!(
        (
            status.phase,
            status.version.as_deref(),
            status.url.as_deref()
        ),
        (PreviewPhase::Ready, Some(v1.as_str()), Some(URL))
    );
    let fleet = env.api::<CelldFleet>().get(PREVIEW).await?;
    assert_eq!(
        fleet.status.and_then(|s| s.deployment).map(|d| d.version),
        Some(v1.clone())
    );
    let pointer = s3
        .get_object(&format!("{prefix}/deploy/current.json"))
        .await?
        .ok_or("no pointer under the preview's prefix")?;
    assert!(String::from_utf8_lossy(&pointer).contains(&v1));

    // list: one row, with about an hour left.
    let list = support::run(&env, &["preview", "list"]).await?;
    assert_eq!(list.code, 0, "{list}");
    let rows: Vec<Vec<&str>> = list
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            "NAME", "FLEET", "PHASE", "AGE", "TTL", "LEFT", "VERSION", "URL"
        ],
        "{list}"
    );
    assert_eq!(rows.len(), 2, "{list}");
    let row = &rows[1];
    assert_eq!(
        (row[0], row[1], row[2], row[5], row[6]),
        (PREVIEW, "web", "Ready", v1.as_str(), URL),
        "{list}"
    );
    let left: u32 = row[4]
        .strip_suffix('m')
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| format!("TTL LEFT {:?} is not minutes", row[4]))?;
    assert!((50..=60).contains(&left), "{list}");
    let json = support::run(&env, &["preview", "list", "-A", "-o", "json"]).await?;
    let doc: serde_json::Value = serde_json::from_str(&json.stdout)?;
    let mine: Vec<&serde_json::Value> = doc["previews"]
        .as_array()
        .ok_or("previews")?
        .iter()
        .filter(|p| p["namespace"] == ns.as_str())
        .collect();
    assert_eq!(mine.len(), 1, "{json}");
    assert_eq!(mine[0]["url"], URL);
    let seconds = mine[0]["ttlLeftSeconds"].as_i64().ok_or("ttlLeftSeconds")?;
    assert!((3000..=3600).contains(&seconds), "{json}");

    // status: the preview and its fleet's short state.
    let status = support::run(&env, &["preview", "status", PREVIEW]).await?;
    assert_eq!(status.code, 0, "{status}");
    for line in [
        "Phase:       Ready".to_string(),
        format!("URL:         {URL}"),
        format!("Version:     {v1}"),
        format!("Fleet:       CelldFleet {PREVIEW}: Ready, 1/1 nodes ready, version {v1}"),
        format!("Bucket:      s3://{}/{prefix}", s3.bucket),
        "TTL:         CelldFleet web's spec.previews.ttl".to_string(),
    ] {
        assert!(status.stdout.contains(&line), "no {line:?} in\n{status}");
    }
    let url = support::run(
        &env,
        &["preview", "status", PREVIEW, "-o", "jsonpath={.url}"],
    )
    .await?;
    assert_eq!(url.stdout, URL, "{url}");

    // The same command again, with a changed Worker: the same preview serves the new version.
    let worker = changed_worker(&scratch)?;
    let v2 = version::of(&project::read(&worker)?);
    assert_ne!(v1, v2);
    nodes.publish(&v2);
    let uid = preview.metadata.uid.clone();
    let run = create(
        &env,
        &double,
        &[
            PREVIEW,
            "--fleet",
            "web",
            worker.to_str().ok_or("path")?,
            "--wait",
            "--wait-timeout",
            WAIT,
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}\noperator log:\n{}", log());
    assert!(
        run.stderr
            .contains(&format!("CelldPreview {ns}/{PREVIEW} exists: updating it")),
        "{run}"
    );
    assert_eq!(run.stdout.lines().last(), Some(URL), "{run}");
    let preview = read(&env).await?.ok_or("no preview")?;
    assert_eq!(preview.metadata.uid, uid, "the same preview");
    assert_eq!(preview.status.and_then(|s| s.version), Some(v2), "{run}");

    // delete --wait: gone with its fleet and the objects under its prefix.
    assert!(!s3.list_keys(&format!("{prefix}/")).await?.is_empty());
    let run = support::run(
        &env,
        &[
            "preview",
            "delete",
            PREVIEW,
            "--wait",
            "--wait-timeout",
            WAIT,
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}\noperator log:\n{}", log());
    assert_eq!(
        run.stdout,
        format!("celldpreview.platform.celld.dev/{PREVIEW} deleted\n")
    );
    assert!(read(&env).await?.is_none(), "{run}");
    assert_eq!(
        s3.list_keys(&format!("{prefix}/")).await?,
        Vec::<String>::new(),
        "the preview's prefix is emptied"
    );
    let fleets = env.api::<CelldFleet>();
    wait_until(format!("CelldFleet {PREVIEW} gone"), WAITING, || async {
        match fleets.get_opt(PREVIEW).await {
            Ok(None) => Check::Done(()),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await?;
    assert!(
        fleets.get_opt("web").await?.is_some(),
        "the previewed fleet stays"
    );

    operator.stop().await;
    env.cleanup().await?;
    Ok(())
}

/// The operator watching `env`'s namespace, reaching the nodes' API at `nodes`.
async fn operator(env: &TestEnv, nodes: &NodeDouble) -> TestResult<OperatorProcess> {
    let launch = Launch::on_namespace(env.namespace(), env.scratch_dir()?.join("operator.log"))
        .await?
        .args(["--node-api-connect-to".to_string(), nodes.address.clone()]);
    Ok(OperatorProcess::start(launch).await?)
}

#[tokio::test]
async fn a_preview_past_its_ttl_is_replaced_by_the_next_create() -> TestResult {
    let env = support::env("plugin-preview-again").await?;
    let ns = env.namespace().to_string();
    let s3 = env.s3()?;
    let scratch = env.scratch_dir()?;
    let poc = poc_worker();
    let nodes = NodeDouble::start("0.6.1", &version::of(&project::read(&poc)?)).await?;
    let operator = operator(&env, &nodes).await?;
    let double = DeployDouble::new(scratch.join("double")).await?;
    fleets(&env, &s3, "preview-again").await?;
    let args = [
        PREVIEW,
        "--fleet",
        "web",
        poc.to_str().ok_or("path")?,
        "--ttl",
        "1m",
        "--wait",
        "--wait-timeout",
        WAIT,
    ];
    let run = create(&env, &double, &args).await?;
    assert_eq!(run.code, 0, "{run}\noperator log:\n{}", operator.log_tail());
    let first = read(&env).await?.ok_or("no preview")?;
    let previews = env.api::<CelldPreview>();
    wait_until(
        "the preview to expire",
        Duration::from_secs(180),
        || async {
            match previews.get_opt(PREVIEW).await {
                Ok(Some(p))
                    if p.status
                        .as_ref()
                        .is_some_and(|s| s.phase == PreviewPhase::Expired) =>
                {
                    Check::Done(())
                }
                other => Check::Pending(format!("{other:?}")),
            }
        },
    )
    .await?;
    let list = support::run(&env, &["preview", "list"]).await?;
    let row: Vec<&str> = list
        .stdout
        .lines()
        .nth(1)
        .ok_or("no row")?
        .split_whitespace()
        .collect();
    assert_eq!((row[2], row[4]), ("Expired", "expired"), "{list}");

    let run = create(&env, &double, &args).await?;
    assert_eq!(run.code, 0, "{run}\noperator log:\n{}", operator.log_tail());
    assert!(
        run.stderr.contains(&format!(
            "CelldPreview {ns}/{PREVIEW} exists but expired at"
        )),
        "{run}"
    );
    assert!(
        run.stderr
            .contains(&format!("CelldPreview {ns}/{PREVIEW} is gone")),
        "{run}"
    );
    assert_eq!(run.stdout.lines().last(), Some(URL), "{run}");
    let again = read(&env).await?.ok_or("no preview")?;
    assert_ne!(again.metadata.uid, first.metadata.uid, "a new preview");
    assert_eq!(
        again.status.map(|s| s.phase),
        Some(PreviewPhase::Ready),
        "{run}"
    );
    operator.stop().await;
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn a_fleet_without_previews_a_ttl_too_long_and_a_missing_preview_are_refused_by_name()
-> TestResult {
    let env = support::env("plugin-preview-refused").await?;
    let ns = env.namespace().to_string();
    let s3 = env.s3()?;
    fleets(&env, &s3, "preview-refused").await?;
    let poc = poc_worker();
    let poc_dir = poc.to_str().ok_or("path")?;

    let run = support::run(
        &env,
        &["preview", "create", "pr-2", "--fleet", "api", poc_dir],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "CelldFleet 'api' in namespace '{ns}' does not allow previews (it has no spec.previews): add spec.previews to it"
        )),
        "{run}"
    );
    assert!(
        run.stderr
            .contains(&format!("kubectl edit celldfleet api -n {ns}")),
        "{run}"
    );
    let previews = env.api::<CelldPreview>();
    assert!(previews.get_opt("pr-2").await?.is_none(), "nothing created");

    // The API server loads the admission policy within a second or so of its installation.
    let probe = serde_json::from_value::<CelldPreview>(serde_json::json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldPreview",
        "metadata": {"name": "probe"}, "spec": {"fleet": "web", "ttl": "3h"},
    }))?;
    wait_until("the previews policy to refuse", WAITING, || async {
        match previews.create(&PostParams::default(), &probe).await {
            Err(kube::Error::Api(e)) if e.message.contains("spec.ttl") => Check::Done(()),
            Ok(_) => {
                let _ = previews.delete("probe", &DeleteParams::default()).await;
                Check::Pending("admitted".to_string())
            }
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await?;
    let run = support::run(
        &env,
        &[
            "preview", "create", "pr-3", "--fleet", "web", poc_dir, "--ttl", "3h",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    for text in [
        format!("the API server refused CelldPreview {ns}/pr-3:"),
        "spec.ttl: 3h is longer than the 2h CelldFleet web allows (spec.previews.maxTtl)"
            .to_string(),
    ] {
        assert!(run.stderr.contains(&text), "no {text:?} in\n{run}");
    }
    assert!(previews.get_opt("pr-3").await?.is_none(), "nothing created");

    let run = support::run(&env, &["preview", "status", "pr-9"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "CelldPreview 'pr-9' does not exist in namespace '{ns}'; list the previews with: kubectl celld preview list -n {ns}"
        )),
        "{run}"
    );
    let run = support::run(&env, &["preview", "delete", "pr-9"]).await?;
    assert_eq!(run.code, 1, "{run}");
    let run = support::run(&env, &["preview", "delete", "pr-9", "--ignore-not-found"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout, "", "{run}");
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn preview_names_complete_and_a_mistyped_one_is_answered_with_similar_ones() -> TestResult {
    let env = support::env("plugin-preview-names").await?;
    let ns = env.namespace().to_string();
    fleets(&env, &env.s3()?, "preview-names").await?;
    for name in ["pr-20", "pr-21", "feature-x"] {
        let preview = serde_json::from_value::<CelldPreview>(serde_json::json!({
            "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldPreview",
            "metadata": {"name": name}, "spec": {"fleet": "web"},
        }))?;
        env.api::<CelldPreview>()
            .create(&PostParams::default(), &preview)
            .await?;
    }
    // kubectl's plugin completion: the plugin started as kubectl_complete-celld.
    let link = env.scratch_dir()?.join("kubectl_complete-celld");
    std::os::unix::fs::symlink(support::BIN, &link)?;
    for args in [["preview", "status"], ["preview", "delete"]] {
        let out = tokio::process::Command::new(&link)
            .args(args)
            .args(["-n", &ns, "pr-"])
            .env("KUBECONFIG", celld_testkit::paths::kubeconfig())
            .output()
            .await?;
        let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect();
        assert_eq!(names, ["pr-20", "pr-21", ":4"], "{args:?}: {out:?}");
    }

    let run = support::run(&env, &["preview", "status", "pr-2"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "CelldPreview 'pr-2' does not exist in namespace '{ns}'; did you mean pr-20, pr-21?"
        )),
        "{run}"
    );
    // Without an operator the previews have no status yet: Pending, nothing else known.
    let list = support::run(&env, &["preview", "list"]).await?;
    assert_eq!(list.code, 0, "{list}");
    let rows: Vec<Vec<&str>> = list
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 3, "{list}");
    assert_eq!(rows[0][..3], ["feature-x", "web", "Pending"], "{list}");
    assert_eq!(rows[0][4..], ["-", "-", "-"], "{list}");
    env.cleanup().await?;
    Ok(())
}
