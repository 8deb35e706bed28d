//! celld-deploy-double against the local S3 server (what it writes, compare-and-swap, refusals),
//! and `DeployDouble::serve` wiring a deploy pod so that `kubectl exec POD -- celld` runs it with
//! the pod's environment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use celld_testkit::deploy_double::hold;
use celld_testkit::{Check, DEPLOY_POD_SELECTOR, DeployDouble, S3Settings, TestEnv, wait_until};
use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, Pod, PodSpec, Secret, SecretKeySelector,
};
use kube::api::{DynamicObject, ObjectMeta, PostParams};
use kube::core::{ApiResource, GroupVersionKind};

use crate::TestResult;

const DOUBLE: &str = env!("CARGO_BIN_EXE_celld-deploy-double");

fn write(root: &Path, rel: &str, text: &str) -> std::io::Result<()> {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap_or(root))?;
    std::fs::write(path, text)
}

fn project(root: &Path) -> std::io::Result<()> {
    write(
        root,
        "wrangler.jsonc",
        "// the test Worker\n{ \"name\": \"web\", \"main\": \"src/index.js\", }\n",
    )?;
    write(
        root,
        "src/index.js",
        "import { hi } from './hi.js'; export default { fetch: () => new Response(hi) };\n",
    )?;
    write(root, "src/hi.js", "export const hi = 'hi';\n")?;
    write(root, "README.md", "not a module\n")
}

/// Runs the double with the local S3 server's credentials (and `extra` environment).
fn double(s3: &S3Settings, args: &[&str], extra: &[(&str, &str)]) -> std::io::Result<Output> {
    let mut cmd = std::process::Command::new(DOUBLE);
    cmd.args(args)
        .env_remove("S3_ENDPOINT")
        .env_remove("AWS_REGION")
        .env_remove(hold::HOLD_ENV)
        .env("AWS_ACCESS_KEY_ID", &s3.access_key_id)
        .env("AWS_SECRET_ACCESS_KEY", &s3.secret_access_key);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output()
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The pointer of the test Worker at `version`, as celld writes it (DeployPointer's JSON).
fn pointer(version: &str) -> Result<String, celld_fixtures::Error> {
    celld_fixtures::pointer::pointer_json("web", version)
}

#[tokio::test]
async fn double_writes_modules_manifest_and_both_pointers_and_loses_a_race_cleanly() -> TestResult {
    let s3 = S3Settings::load()?;
    let prefix = s3.unique_prefix("deploy-double");
    let prefix = prefix.trim_end_matches('/');
    let bucket = format!("s3://{}/{prefix}", s3.bucket);
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("worker");
    project(&src)?;
    let src_arg = src.to_str().ok_or("path")?;
    let args = [
        "deploy",
        src_arg,
        "--bucket",
        &bucket,
        "--endpoint",
        &s3.endpoint,
        "--region",
        &s3.region,
    ];
    let key = |rel: &str| format!("{prefix}/{rel}");

    // A dry run publishes nothing, and --json reports the version.
    let mut dry: Vec<&str> = args.to_vec();
    dry.extend(["--dry-run", "--json"]);
    let out = double(&s3, &dry, &[])?;
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let v1 = report["version"].as_str().ok_or("version")?.to_string();
    assert_eq!(v1.len(), 16);
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["published"], false);
    assert_eq!(s3.get_object(&key("deploy/current.json")).await?, None);

    // The first deploy creates both pointers (If-None-Match: *).
    let out = double(&s3, &args, &[])?;
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("Version {v1}")), "{}", text(&out));
    assert!(
        stdout.contains("Wrote deploy/current.json (compare-and-swap: it did not exist)"),
        "{}",
        text(&out)
    );
    let fleet = s3.get_object(&key("deploy/current.json")).await?;
    assert_eq!(fleet, Some(pointer(&v1)?.into_bytes()));
    let script = s3.get_object(&key("deploy/web/current.json")).await?;
    assert_eq!(script, Some(pointer(&v1)?.into_bytes()));
    let module = s3
        .get_object(&key(&format!("deploy/web/{v1}/src/hi.js")))
        .await?;
    assert_eq!(module.as_deref(), Some(&b"export const hi = 'hi';\n"[..]));
    assert_eq!(
        s3.get_object(&key(&format!("deploy/web/{v1}/README.md")))
            .await?,
        None
    );
    let manifest = s3
        .get_object(&key(&format!("deploy/web/{v1}/manifest.json")))
        .await?
        .ok_or("no manifest")?;
    let manifest: serde_json::Value = serde_json::from_slice(&manifest)?;
    assert_eq!(manifest["version"], v1.as_str());
    let size = |rel: &str| std::fs::metadata(src.join(rel)).map(|m| m.len());
    assert_eq!(
        manifest["modules"],
        serde_json::json!([
            {"path": "src/hi.js", "size": size("src/hi.js")?},
            {"path": "src/index.js", "size": size("src/index.js")?},
        ])
    );
    assert!(
        manifest["uploaded_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );

    // Changed sources: a new version replaces the pointer (If-Match).
    write(&src, "src/hi.js", "export const hi = 'hello';\n")?;
    let out = double(&s3, &args, &[])?;
    assert!(out.status.success(), "{}", text(&out));
    let v2 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("Version ").map(str::to_string))
        .ok_or("no version line")?;
    assert_ne!(v1, v2);
    assert_eq!(
        s3.get_object(&key("deploy/current.json")).await?,
        Some(pointer(&v2)?.into_bytes())
    );

    // Another writer changes the pointer between the read and the write: the deploy fails.
    write(&src, "src/hi.js", "export const hi = 'third';\n")?;
    let hold_dir = dir.path().join("hold");
    let hold_arg = hold_dir.display().to_string();
    let (s3_c, args_c): (S3Settings, Vec<String>) =
        (s3.clone(), args.iter().map(|a| a.to_string()).collect());
    let racing = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args_c.iter().map(String::as_str).collect();
        double(&s3_c, &args, &[(hold::HOLD_ENV, &hold_arg)])
    });
    let held = hold_dir.join(hold::HELD_FILE);
    let expected = wait_until("the double to hold", Duration::from_secs(30), || async {
        match std::fs::read_to_string(&held) {
            Ok(t) if !t.is_empty() => Check::Done(t),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await?;
    assert!(
        expected.starts_with("deploy/current.json\nit had ETag "),
        "{expected}"
    );
    let rollback = pointer(&v1)?.into_bytes();
    s3.put_object(&key("deploy/current.json"), rollback.clone())
        .await?;
    std::fs::write(hold_dir.join(hold::RELEASE_FILE), "")?;
    let out = racing.await??;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "another deploy changed s3://{}/{prefix}/deploy/current.json after this deploy read it",
            s3.bucket
        )),
        "{}",
        text(&out)
    );
    assert!(stderr.contains("re-run the deploy"), "{}", text(&out));
    assert_eq!(
        s3.get_object(&key("deploy/current.json")).await?,
        Some(rollback)
    );
    Ok(())
}

#[tokio::test]
async fn double_refuses_what_celld_refuses_and_any_non_local_endpoint() -> TestResult {
    let s3 = S3Settings::load()?;
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("worker");
    project(&src)?;
    let src_arg = src.to_str().ok_or("path")?;
    let bucket = format!("s3://{}/refusals", s3.bucket);
    /// Arguments, extra environment, what stderr must say.
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec![
                "deploy",
                "/nonexistent-dir",
                "--bucket",
                &bucket,
                "--endpoint",
                &s3.endpoint,
            ],
            vec![],
            "is not a directory",
        ),
        (
            vec![
                "deploy",
                src_arg,
                "--bucket",
                &bucket,
                "--endpoint",
                "https://s3.amazonaws.com",
            ],
            vec![],
            "never to a real bucket",
        ),
        (
            vec![
                "deploy",
                src_arg,
                "--bucket",
                "gs://b/p",
                "--endpoint",
                &s3.endpoint,
            ],
            vec![],
            "S3 only",
        ),
        (
            vec!["deploy", src_arg, "--bucket", "gs://b/p"],
            vec![("GOOGLE_BASE_URL", "https://storage.googleapis.com")],
            "never to a real bucket",
        ),
        (
            vec![
                "deploy",
                src_arg,
                "--bucket",
                &bucket,
                "--endpoint",
                &s3.endpoint,
            ],
            vec![("AWS_ACCESS_KEY_ID", "")],
            "no S3 credentials",
        ),
    ];
    for (args, env, want) in cases {
        let out = double(&s3, &args, &env)?;
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(want),
            "{args:?}: {}",
            text(&out)
        );
    }
    write(
        &src,
        "wrangler.jsonc",
        "{ \"name\": \"web\", \"main\": \"src/index.js\", \"kv_namespaces\": [] }",
    )?;
    let out = double(
        &s3,
        &["deploy", src_arg, "--bucket", &bucket, "--dry-run"],
        &[],
    )?;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown top-level key \"kv_namespaces\""),
        "{}",
        text(&out)
    );
    let out = std::process::Command::new(DOUBLE).arg("--help").output()?;
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("a TEST DOUBLE of `celld deploy`"),
        "{}",
        text(&out)
    );
    Ok(())
}

fn env_var(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        ..EnvVar::default()
    }
}

fn secret_var(name: &str, secret: &str, optional: bool) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.into(),
                key: name.into(),
                optional: optional.then_some(true),
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

/// A pod like the plugin's deploy pod: working directory /work, credentials from a Secret.
fn deploy_pod(name: &str, labels: BTreeMap<String, String>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "deploy".into(),
                image: Some("testenv.invalid/deployer:1".into()),
                working_dir: Some("/work".into()),
                env: Some(vec![
                    env_var("HOME", "/work"),
                    secret_var("AWS_ACCESS_KEY_ID", "creds", false),
                    secret_var("AWS_SECRET_ACCESS_KEY", "creds", false),
                    secret_var("AWS_SESSION_TOKEN", "creds", true),
                ]),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

#[tokio::test]
async fn serve_wires_each_deploy_pod_to_the_double_with_the_pods_environment() -> TestResult {
    let env = TestEnv::new("deploy-double-wiring").await?;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("creds".into()),
            ..ObjectMeta::default()
        },
        string_data: Some(BTreeMap::from([
            (
                "AWS_ACCESS_KEY_ID".to_string(),
                "key-id-from-secret".to_string(),
            ),
            (
                "AWS_SECRET_ACCESS_KEY".to_string(),
                "secret-from-secret".to_string(),
            ),
        ])),
        ..Secret::default()
    };
    env.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await?;
    let root: PathBuf = env.scratch_dir()?.join("double");
    let double = DeployDouble::install(&root, Path::new(DOUBLE))?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let serving = {
        let (double, client, ns) = (double.clone(), env.client(), env.namespace().to_string());
        tokio::spawn(async move {
            double
                .serve(&client, &ns, DEPLOY_POD_SELECTOR, move |line| {
                    let _ = tx.send(line);
                })
                .await
        })
    };
    let first = tokio::time::timeout(Duration::from_secs(30), rx.recv()).await?;
    assert!(
        first.is_some_and(|l| l.contains("watching pods")),
        "the watch did not start"
    );

    let (key, value) = DEPLOY_POD_SELECTOR.split_once('=').ok_or("selector")?;
    let labels = BTreeMap::from([(key.to_string(), value.to_string())]);
    let pods = env.api::<Pod>();
    pods.create(&PostParams::default(), &deploy_pod("deployer", labels))
        .await?;
    pods.create(
        &PostParams::default(),
        &deploy_pod("bystander", BTreeMap::new()),
    )
    .await?;
    let wired = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await?;
    let wired = wired.ok_or("serve ended")?;
    assert!(
        wired.contains("pod") && wired.contains("/deployer: `celld` runs the deploy double"),
        "{wired}"
    );

    let out = env
        .kubectl()
        .run([
            "exec",
            "deployer",
            "--",
            "sh",
            "-c",
            r#"echo "$AWS_ACCESS_KEY_ID $AWS_SECRET_ACCESS_KEY ${AWS_SESSION_TOKEN-unset} $HOME $(pwd)"; celld --version; command -v curl || echo no curl"#,
        ])
        .await?;
    let work = double.work_dir("deployer");
    assert_eq!(
        out,
        format!(
            "key-id-from-secret secret-from-secret unset {w} {w}\ncelld-deploy-double {}\nno curl\n",
            env!("CARGO_PKG_VERSION"),
            w = work.display()
        )
    );
    // A pod the selector does not match keeps kwok's default rule.
    let out = env
        .kubectl()
        .output(
            ["exec", "bystander", "--", "printenv", "AWS_ACCESS_KEY_ID"],
            None,
        )
        .await?;
    assert!(!String::from_utf8_lossy(&out.stdout).contains("key-id-from-secret"));

    // The rule belongs to the pod: deleting the pod deletes it.
    pods.delete("deployer", &Default::default()).await?;
    let gvk = GroupVersionKind::gvk("kwok.x-k8s.io", "v1alpha1", "Exec");
    let execs: kube::Api<DynamicObject> = kube::Api::namespaced_with(
        env.client(),
        env.namespace(),
        &ApiResource::from_gvk_with_plural(&gvk, "execs"),
    );
    wait_until(
        "the Exec rule of the deleted pod to be deleted",
        Duration::from_secs(60),
        || async {
            match execs.get_opt("deployer").await {
                Ok(None) => Check::Done(()),
                other => Check::Pending(format!("{other:?}")),
            }
        },
    )
    .await?;
    serving.abort();
    env.cleanup().await?;
    Ok(())
}
