//! Errors that say what to do, against the real API server: RBAC refusals name the verb and
//! the resource; the namespace comes from the kubeconfig context when -n is not given.

use crate::support::{self, BIN, Run, TestResult};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::api::{ObjectMeta, PostParams};
use std::process::Stdio;

/// A kubeconfig for service account `sa` of the test namespace, whose context namespace is the
/// test namespace.
async fn sa_kubeconfig(env: &celld_testkit::TestEnv, sa: &str) -> TestResult<std::path::PathBuf> {
    let admin: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(celld_testkit::paths::kubeconfig())?)?;
    let cluster = admin["clusters"][0]["cluster"].clone();
    let token = celld_testkit::service_account_token(&env.client(), env.namespace(), sa).await?;
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "testenv", "cluster": serde_json::to_value(&cluster)?}],
        "users": [{"name": sa, "user": {"token": token}}],
        "contexts": [{"name": sa, "context": {"cluster": "testenv", "user": sa, "namespace": env.namespace()}}],
        "current-context": sa,
    });
    let path = env.scratch_dir()?.join(format!("{sa}.kubeconfig"));
    std::fs::write(&path, serde_yaml::to_string(&config)?)?;
    Ok(path)
}

async fn run_as(kubeconfig: &std::path::Path, args: &[&str]) -> TestResult<Run> {
    let out = tokio::process::Command::new(BIN)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::null())
        .output()
        .await?;
    Ok(Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

#[tokio::test]
async fn rbac_refusals_name_the_verb_and_the_resource() -> TestResult {
    let env = support::env_with_web("plugin-rbac", "rbac").await?;
    let ns = env.namespace().to_string();

    // A developer who may read fleets and stores, and nothing else.
    let meta = |name: &str| ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    };
    env.api::<ServiceAccount>()
        .create(
            &PostParams::default(),
            &ServiceAccount {
                metadata: meta("dev"),
                ..ServiceAccount::default()
            },
        )
        .await?;
    env.api::<Role>()
        .create(
            &PostParams::default(),
            &Role {
                metadata: meta("fleet-reader"),
                rules: Some(vec![PolicyRule {
                    api_groups: Some(vec!["platform.celld.dev".into()]),
                    resources: Some(vec!["celldfleets".into(), "celldobjectstores".into()]),
                    verbs: vec!["get".into(), "list".into(), "watch".into()],
                    ..PolicyRule::default()
                }]),
            },
        )
        .await?;
    env.api::<RoleBinding>()
        .create(
            &PostParams::default(),
            &RoleBinding {
                metadata: meta("dev-fleet-reader"),
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "Role".into(),
                    name: "fleet-reader".into(),
                },
                subjects: Some(vec![Subject {
                    kind: "ServiceAccount".into(),
                    name: "dev".into(),
                    namespace: Some(ns.clone()),
                    ..Subject::default()
                }]),
            },
        )
        .await?;
    let kubeconfig = sa_kubeconfig(&env, "dev").await?;

    // No -n: the namespace is the context's.
    let run = run_as(&kubeconfig, &["deploy", "--image", "x", "--fleet", "web"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "forbidden: you may not create jobs.batch in namespace '{ns}': ask a cluster admin for a Role granting 'create' on 'jobs.batch' (check with: kubectl auth can-i create jobs.batch -n {ns})"
        )),
        "{run}"
    );
    let run = run_as(&kubeconfig, &["logs", "web"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "forbidden: you may not list pods in namespace '{ns}'"
        )),
        "{run}"
    );
    let run = run_as(&kubeconfig, &["status", "-A"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("forbidden: you may not list celldfleets.platform.celld.dev cluster-wide"),
        "{run}"
    );
    let run = run_as(&kubeconfig, &["top", "-A"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("forbidden: you may not list celldfleets.platform.celld.dev cluster-wide"),
        "{run}"
    );
    // In the namespace it may read fleets: top needs nothing else.
    let run = run_as(&kubeconfig, &["top"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("web ")),
        "{run}"
    );
    // status still reports what it may read, and names what it may not.
    let run = run_as(&kubeconfig, &["status", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("via CelldObjectStore minio"), "{run}");
    assert!(
        run.stdout
            .contains("credentials from Secret s3-creds (not checked)"),
        "{run}"
    );
    assert!(
        run.stdout.contains(&format!(
            "forbidden: you may not get statefulsets.apps in namespace '{ns}'"
        )),
        "{run}"
    );
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn unknown_context_and_missing_kubeconfig_say_what_to_do() -> TestResult {
    let env = support::env("plugin-kubeconfig").await?;
    let run = support::run(&env, &["status", "--context", "nope"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("kubectl config get-contexts"), "{run}");
    let missing = env.scratch_dir()?.join("missing.kubeconfig");
    let run = support::run(
        &env,
        &["status", "--kubeconfig", missing.to_str().ok_or("path")?],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("missing.kubeconfig"), "{run}");
    env.cleanup().await?;
    Ok(())
}
