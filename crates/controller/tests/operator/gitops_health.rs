//! Health as GitOps tools read it, judged by their own code (`gitops-health`: kstatus, which
//! Flux's health checks use, and Argo CD's Lua health check in gopher-lua, the interpreter Argo
//! CD embeds) on fleets the operator reports: serving is Current and Healthy; nodes that cannot
//! start yet are InProgress and Progressing; a missing Secret is Failed and Degraded; a fleet
//! with no Worker deployed is Failed for kstatus (nothing moves until someone deploys) and
//! Suspended for Argo CD. The Lua checks' own fixtures pass in the same interpreter, and kstatus
//! reads each CelldRollout fixture as Flux would (the fixtures are CelldRollouts as the API
//! crate reads them).

use crate::support::*;
use celld_api::{CelldFleet, CelldRollout};
use celld_testkit::{Check, TestEnv, wait_until};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The Argo CD health check of `kind` shipped in config/.
fn argo_check_dir(kind: &str) -> PathBuf {
    celld_testkit::paths::workspace_root()
        .join("config/argocd/resource_customizations/platform.celld.dev")
        .join(kind)
}

/// Runs `gitops-health ARGS` with `input` on stdin; its stdout, or a panic naming what failed.
fn judge(args: &[&str], input: &[u8]) -> String {
    let tool = celld_testkit::paths::gitops_health();
    assert!(
        tool.exists(),
        "{} is missing: build and link it with `make cluster-up` (testenv/scripts/build.sh gitops-health)",
        tool.display()
    );
    let mut child = Command::new(&tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gitops-health runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("the object written to gitops-health");
    let out = child.wait_with_output().expect("gitops-health ends");
    assert!(
        out.status.success(),
        "gitops-health {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// kstatus' and Argo CD's verdicts on `fleet`, each as (status, message).
fn verdicts(fleet: &CelldFleet) -> [(String, String); 2] {
    let object = serde_json::to_vec(fleet).expect("the fleet as JSON");
    let script = argo_check_dir("CelldFleet").join("health.lua");
    let script = script.to_str().expect("a UTF-8 path");
    [
        judge(&["kstatus", "-"], &object),
        judge(&["lua", script, "-"], &object),
    ]
    .map(|out| {
        let v: Value = serde_json::from_str(&out).expect("gitops-health prints JSON");
        (
            v["status"].as_str().unwrap_or_default().to_string(),
            v["message"].as_str().unwrap_or_default().to_string(),
        )
    })
}

/// Waits until the fleet `name` is judged `kstatus` and `argo`; returns the messages.
async fn judged(env: &TestEnv, name: &str, kstatus: &str, argo: &str) -> [(String, String); 2] {
    let api = env.api::<CelldFleet>();
    wait_until(
        format!("fleet {name}: kstatus {kstatus}, Argo CD {argo}"),
        TIMEOUT,
        || async {
            let Ok(Some(fleet)) = api.get_opt(name).await else {
                return Check::Pending("no fleet".into());
            };
            let v = verdicts(&fleet);
            if v[0].0 == kstatus && v[1].0 == argo {
                Check::Done(v)
            } else {
                Check::Pending(format!("{v:?} for {:?}", fleet.status))
            }
        },
    )
    .await
    .expect("the GitOps tools' verdicts")
}

/// Why the operator writes a status as soon as a fleet's children are applied, before its nodes
/// are ready, and why the bench's floor does too: kstatus judges a fleet with no status yet
/// Current, so Flux would call a fleet ready from its creation on; the shipped Lua check waits.
#[test]
fn a_fleet_without_a_status_is_current_for_kstatus() {
    let fleet: CelldFleet = serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
        "metadata": {"name": "new", "namespace": "gitops", "generation": 1},
        "spec": {"replicas": 2, "objectStorage": {"bucket": "s3://b/new"}},
    }))
    .expect("a CelldFleet");
    assert!(fleet.status.is_none());
    let [kstatus, argo] = verdicts(&fleet);
    assert_eq!(kstatus.0, "Current", "{kstatus:?}");
    assert_eq!(argo.0, "Progressing", "{argo:?}");
}

#[tokio::test]
async fn flux_and_argo_cd_read_each_state_of_a_fleet_right() {
    let (env, _nodes, op) = env_with_nodes("gitops", "0.6.1", "00000000000000d1").await;
    let s3 = env.s3().expect("S3 settings");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    // A deployed prefix each (two fleets may not share one), and one without a deployment.
    let deployed = prefix(&s3, "gitops");
    for name in ["serving", "pending", "nosecret"] {
        publish_pointer(&s3, &format!("{deployed}/{name}"), "00000000000000d1").await;
    }
    let image = json!({"image": "ghcr.io/denoland/celld:v0.6.1"});
    let fleets = [
        ("serving", format!("{deployed}/serving"), json!({})),
        (
            "pending",
            format!("{deployed}/pending"),
            json!({"nodeSelector": {"celld.test/never": "scheduled"}}),
        ),
        (
            "nosecret",
            format!("{deployed}/nosecret"),
            json!({"objectStorage": {"credentialsSecretRef": {"name": "missing"}}}),
        ),
        ("held", prefix(&s3, "gitops-held"), json!({})),
    ];
    for (name, prefix, mut extra) in fleets {
        celld_fixtures::merge(&mut extra, image.clone());
        apply_fleet(
            &env,
            &inline_fleet(name, &s3, &prefix, extra).expect("a CelldFleet"),
        )
        .await;
    }

    let [kstatus, argo] = judged(&env, "serving", "Current", "Healthy").await;
    assert_eq!(argo.1, "2/2 nodes ready", "{kstatus:?}");
    let [kstatus, argo] = judged(&env, "pending", "InProgress", "Progressing").await;
    assert!(argo.1.starts_with("RollingOut: "), "{argo:?} {kstatus:?}");
    let [kstatus, argo] = judged(&env, "nosecret", "Failed", "Degraded").await;
    assert!(
        kstatus.1.contains("missing") && argo.1.starts_with("SecretNotFound: "),
        "{kstatus:?} {argo:?}"
    );
    let [kstatus, argo] = judged(&env, "held", "Failed", "Suspended").await;
    assert!(
        kstatus.1.contains("no Worker is deployed") && argo.1.starts_with("NoDeployment: "),
        "{kstatus:?} {argo:?}"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn flux_and_argo_cd_read_a_fleet_publishing_its_declared_source_right() {
    let (env, _nodes, op) = env_with_nodes("gitops-source", "0.6.1", "00000000000000d1").await;
    let s3 = env.s3().expect("S3 settings");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let deployed = prefix(&s3, "gitops-source");
    publish_pointer(&s3, &deployed, "00000000000000d1").await;
    let reference = "registry.invalid/acme/w:1@sha256:1111111111111111111111111111111111111111111111111111111111111111";
    let fleets = [
        ("publishing", prefix(&s3, "gitops-publishing"), json!({})),
        (
            "failing",
            prefix(&s3, "gitops-failing"),
            json!({"retries": 1}),
        ),
        ("suspended", deployed.clone(), json!({"suspend": true})),
    ];
    for (name, prefix, mut source) in fleets {
        celld_fixtures::merge(&mut source, json!({"image": {"reference": reference}}));
        let extra = json!({"image": "ghcr.io/denoland/celld:v0.6.1", "source": source});
        apply_fleet(
            &env,
            &inline_fleet(name, &s3, &prefix, extra).expect("a CelldFleet"),
        )
        .await;
    }
    let [kstatus, argo] = judged(&env, "publishing", "InProgress", "Progressing").await;
    assert!(argo.1.starts_with("Publishing: "), "{argo:?} {kstatus:?}");
    let (_, pod) = crate::source::attempt_pod_of(&env, "failing", 1).await;
    celld_testkit::complete_pod(
        &env.api(),
        &pod,
        &celld_testkit::Completion::failed().with_termination_message(
            r#"{"outcome":"Failed","step":"deploy","exitCode":1,"message":"no wrangler.jsonc"}"#,
        ),
    )
    .await
    .expect("the publish fails");
    let [kstatus, argo] = judged(&env, "failing", "Failed", "Degraded").await;
    assert!(
        kstatus.1.contains("no wrangler.jsonc") && argo.1.starts_with("PublishFailed: "),
        "{kstatus:?} {argo:?}"
    );
    let [kstatus, argo] = judged(&env, "suspended", "Current", "Suspended").await;
    assert!(
        argo.1.contains("spec.source.suspend is true"),
        "{argo:?} {kstatus:?}"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

/// The fixture files of the health check of `kind`, by name without `.yaml`, sorted.
fn fixtures(kind: &str) -> Vec<String> {
    let dir = argo_check_dir(kind).join("testdata");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the testdata directory")
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.to_str()?.strip_suffix(".yaml").map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Runs the Argo CD health check of `kind` on each case of its health_test.yaml, as Argo CD's
/// own tests do: gitops-health exits 1 (and `judge` panics) when a fixture gets another status
/// or message. Every fixture must be a case, so none is left unchecked.
fn argo_cases_pass(kind: &str) {
    let dir = argo_check_dir(kind);
    let cases: Value = serde_yaml::from_str(
        &std::fs::read_to_string(dir.join("health_test.yaml")).expect("health_test.yaml"),
    )
    .expect("health_test.yaml is YAML");
    let mut inputs: Vec<String> = cases["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|case| case["inputPath"].as_str().expect("inputPath").to_string())
        .collect();
    inputs.sort();
    let files: Vec<String> = fixtures(kind)
        .iter()
        .map(|name| format!("testdata/{name}.yaml"))
        .collect();
    assert_eq!(inputs, files, "{kind}: health_test.yaml and testdata/");
    let out = judge(&["lua-tests", dir.to_str().expect("a UTF-8 path")], b"");
    assert!(
        out.lines().count() == files.len() && out.lines().all(|l| l.starts_with("ok ")),
        "{out}"
    );
}

#[test]
fn the_argo_cd_health_check_passes_its_fixtures() {
    argo_cases_pass("CelldFleet");
}

#[test]
fn the_rollout_health_check_passes_its_fixtures() {
    argo_cases_pass("CelldRollout");
}

/// What kstatus (Flux's health checks) makes of each CelldRollout fixture: under way or waiting
/// for a person (paused, a promotion) is InProgress, so a Kustomization waits; halted, rolled
/// back or aborted is Failed at once; every wave passed is Current. Without a status it is
/// Current, as a fleet is: the operator must write one as soon as it sees the rollout.
const ROLLOUT_KSTATUS: &[(&str, &str)] = &[
    ("aborted", "Failed"),
    ("baking", "InProgress"),
    ("halted", "Failed"),
    ("no-status", "Current"),
    ("not-observed", "InProgress"),
    ("paused", "InProgress"),
    ("progressing", "InProgress"),
    ("rolled-back", "Failed"),
    ("succeeded", "Current"),
    ("waiting-for-promotion", "InProgress"),
];

/// The CelldRollout fixture `name`, as written.
fn rollout_fixture(name: &str) -> String {
    let path = argo_check_dir("CelldRollout").join(format!("testdata/{name}.yaml"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn kstatus_reads_each_rollout_fixture_right() {
    let names: Vec<&str> = ROLLOUT_KSTATUS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        fixtures("CelldRollout"),
        "one expectation per fixture"
    );
    for (name, want) in ROLLOUT_KSTATUS {
        let out = judge(&["kstatus", "-"], rollout_fixture(name).as_bytes());
        let verdict: Value = serde_json::from_str(&out).expect("gitops-health prints JSON");
        assert_eq!(verdict["status"], *want, "{name}: {verdict}");
    }
}

/// Where `written` sets a field that `read` lacks or holds another value in, as paths.
fn lost(written: &Value, read: &Value, at: &str, out: &mut Vec<String>) {
    match (written, read) {
        (Value::Object(w), Value::Object(r)) => {
            for (key, value) in w {
                match r.get(key) {
                    Some(got) => lost(value, got, &format!("{at}.{key}"), out),
                    None => out.push(format!("{at}.{key}")),
                }
            }
        }
        (Value::Array(w), Value::Array(r)) if w.len() == r.len() => {
            for (i, (value, got)) in w.iter().zip(r).enumerate() {
                lost(value, got, &format!("{at}[{i}]"), out);
            }
        }
        _ if written == read => {}
        _ => out.push(format!("{at}: {written} read as {read}")),
    }
}

/// The fixtures stand for what the operator will write: each is read by the API crate's
/// CelldRollout without losing a field (a misspelt, misplaced or mistyped one would be lost).
#[test]
fn the_rollout_fixtures_are_celld_rollouts() {
    for name in fixtures("CelldRollout") {
        let text = rollout_fixture(&name);
        let written: Value = serde_yaml::from_str(&text).expect("a fixture is YAML");
        let rollout: CelldRollout =
            serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let read = serde_json::to_value(&rollout).expect("the rollout as JSON");
        let mut out = Vec::new();
        lost(&written, &read, "", &mut out);
        assert!(out.is_empty(), "{name}: {out:#?}");
    }
}
