//! The plugin as users run it: `kubectl celld ...`, found by kubectl's own plugin discovery on
//! PATH, with the kubeconfig from KUBECONFIG.

use crate::support::{self, BIN, TestResult};
use celld_testkit::paths;

#[tokio::test]
async fn runs_as_kubectl_celld_through_plugin_discovery() -> TestResult {
    let env = support::env("plugin-kubectl").await?;
    let dir = env.scratch_dir()?.join("plugins");
    std::fs::create_dir_all(&dir)?;
    std::os::unix::fs::symlink(BIN, dir.join("kubectl-celld"))?;
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let kubectl = |args: &[&str]| {
        let mut c = tokio::process::Command::new(paths::kubectl());
        c.args(args)
            .env("PATH", &path)
            .env("KUBECONFIG", paths::kubeconfig())
            .stdin(std::process::Stdio::null());
        c
    };
    let text = |o: &std::process::Output| {
        format!(
            "exit {:?}\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };

    let out = kubectl(&["plugin", "list"]).output().await?;
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains(&dir.join("kubectl-celld").display().to_string()),
        "{}",
        text(&out)
    );
    let out = kubectl(&["celld", "--version"]).output().await?;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("kubectl-celld {}", env!("CARGO_PKG_VERSION")),
        "{}",
        text(&out)
    );

    let bucket = support::bucket(&env.s3()?, "kubectl");
    let ns = env.namespace();
    let out = kubectl(&[
        "celld",
        "init",
        "via-kubectl",
        "--store",
        "minio",
        "--bucket",
        &bucket,
        "-n",
        ns,
        "--apply",
    ])
    .output()
    .await?;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "celldfleet.platform.celld.dev/via-kubectl created\n"
    );
    let out = kubectl(&["celld", "status", "via-kubectl", "-n", ns, "-o", "json"])
        .output()
        .await?;
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(v["name"], "via-kubectl");
    assert_eq!(v["storage"]["bucket"], bucket.as_str());
    env.cleanup().await?;
    Ok(())
}
