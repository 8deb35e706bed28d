//! kubectl's conventions against the real API server: API errors in words (never a debug
//! dump), a warning when `init --apply` names a store or Secret that does not exist, and
//! `status` with a label selector and kubectl's output formats.

use crate::support::{self, TestResult};

#[tokio::test]
async fn init_into_a_missing_namespace_says_so_in_words() -> TestResult {
    let env = support::env("plugin-conv-ns").await?;
    let missing = format!("{}-nope", env.namespace());
    let run = support::run(
        &env,
        &[
            "init",
            "web",
            "--store",
            "s",
            "--bucket",
            "s3://bkt/web",
            "-n",
            &missing,
            "--apply",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "namespaces \"{missing}\" not found (NotFound, HTTP 404); create the namespace with: kubectl create namespace {missing}"
        )),
        "{run}"
    );
    assert!(!run.stderr.contains("Status {"), "{run}");
    assert!(!run.stderr.contains("ApiError"), "{run}");
    Ok(())
}

#[tokio::test]
async fn init_warns_about_a_store_and_a_secret_that_do_not_exist() -> TestResult {
    let env = support::env("plugin-conv-store").await?;
    let ns = env.namespace().to_string();
    let run = support::run(
        &env,
        &[
            "init",
            "web",
            "--store",
            "no-such-store",
            "--bucket",
            "s3://bkt/web",
            "--apply",
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.stdout, "celldfleet.platform.celld.dev/web created\n",
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!(
            "warning: CelldObjectStore 'no-such-store' does not exist in namespace '{ns}'"
        )) && run
            .stderr
            .contains(&format!("kubectl -n {ns} apply --server-side")),
        "{run}"
    );

    support::store(&env, "minio", "no-such-secret").await?;
    let run = support::run(
        &env,
        &[
            "init",
            "web",
            "--store",
            "minio",
            "--bucket",
            "s3://bkt/web",
            "--apply",
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "warning: Secret 'no-such-secret' with the object-storage credentials does not exist in namespace '{ns}'"
        )) && run.stderr.contains(&format!(
            "kubectl -n {ns} create secret generic no-such-secret"
        )),
        "{run}"
    );
    Ok(())
}

#[tokio::test]
async fn status_selects_by_label_and_prints_kubectl_formats() -> TestResult {
    let env = support::env_with_web("plugin-conv-status", "conv-web").await?;
    let s3 = env.s3()?;
    support::fleet(&env, "api", "minio", &support::bucket(&s3, "conv-api")).await?;
    let fleets: kube::Api<celld_api::CelldFleet> = env.api();
    fleets
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"metadata": {"labels": {"team": "web"}}})),
        )
        .await?;

    let run = support::run(&env, &["status", "-l", "team=web", "-o", "name"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout, "celldfleet.platform.celld.dev/web\n", "{run}");

    let run = support::run(
        &env,
        &[
            "status",
            "-o",
            r#"jsonpath={range .fleets[*]}{.name}={.ready}{"\n"}{end}"#,
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout, "api=false\nweb=false\n", "{run}");

    let run = support::run(&env, &["status", "web", "-o", "json"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(
        doc["storage"]["secretExists"],
        serde_json::json!(true),
        "{run}"
    );
    assert!(!run.stdout.contains("null"), "{run}");

    let run = support::run(&env, &["status", "-o", "wide"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let header = run.stdout.lines().next().unwrap_or_default();
    assert!(
        header.contains(" REGION ") && header.ends_with(" SECRET"),
        "{run}"
    );
    Ok(())
}

#[tokio::test]
async fn status_watch_prints_again_when_the_fleets_change() -> TestResult {
    let env = support::env_with_web("plugin-conv-watch", "watch-web").await?;
    let s3 = env.s3()?;
    let mut child = support::plugin(
        &env,
        &["status", "-w", "-o", r#"jsonpath={.fleets[*].name}{"\n"}"#],
    )
    .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _out = support::collect(stdout, Some(tx));
    let first = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv()).await?;
    assert_eq!(first.as_deref(), Some("web"));
    support::fleet(&env, "api", "minio", &support::bucket(&s3, "watch-api")).await?;
    let second = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv()).await?;
    assert_eq!(second.as_deref(), Some("api web"));
    child.kill().await?;
    Ok(())
}
