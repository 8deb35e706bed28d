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

/// `kubectl celld <Tab>` through kubectl's own plugin completion (`kubectl __complete`, what
/// the shells call): kubectl finds `kubectl_complete-celld` next to the plugin and shows what it
/// prints: subcommands, the namespace's fleet names, namespaces and contexts.
#[tokio::test]
async fn kubectl_completes_fleet_names_namespaces_and_contexts() -> TestResult {
    let env = support::env("plugin-complete").await?;
    let ns = env.namespace();
    let bucket = support::bucket(&env.s3()?, "complete");
    support::fleet(&env, "web-a", "minio", &bucket).await?;
    support::fleet(&env, "web-b", "minio", &bucket).await?;
    support::fleet(&env, "api", "minio", &bucket).await?;
    let dir = env.scratch_dir()?.join("plugins");
    std::fs::create_dir_all(&dir)?;
    std::os::unix::fs::symlink(BIN, dir.join("kubectl-celld"))?;
    // As `make plugin` installs it: a link to the plugin binary.
    std::os::unix::fs::symlink("kubectl-celld", dir.join("kubectl_complete-celld"))?;
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let complete = async |args: &[&str]| -> TestResult<Vec<String>> {
        let out = tokio::process::Command::new(paths::kubectl())
            .arg("__complete")
            .args(args)
            .env("PATH", &path)
            .env("KUBECONFIG", paths::kubeconfig())
            .stdin(std::process::Stdio::null())
            .output()
            .await?;
        assert!(out.status.success(), "{out:?}");
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect())
    };

    let got = complete(&["celld", "hi"]).await?;
    assert_eq!(got, ["history", ":4"]);
    let got = complete(&["celld", "status", "-n", ns, "web"]).await?;
    assert_eq!(got, ["web-a", "web-b", ":4"]);
    // An empty word: the fleets first, then the flags.
    let got = complete(&["celld", "rollback", "--namespace", ns, ""]).await?;
    assert_eq!(got[..3], ["api", "web-a", "web-b"], "{got:?}");
    assert!(
        got[3..got.len() - 1].iter().all(|w| w.starts_with("--")),
        "{got:?}"
    );
    assert!(got.iter().any(|w| w == "--to"), "{got:?}");
    let got = complete(&["celld", "deploy", "-n", ns, "--fleet", "a"]).await?;
    assert_eq!(got, ["api", ":4"]);
    let got = complete(&["celld", "logs", "-n", &ns[..ns.len() - 1]]).await?;
    assert!(got.iter().any(|n| n == ns), "{got:?}");
    let got = complete(&["celld", "status", "--context", ""]).await?;
    assert_eq!(got, ["celld-testenv", ":4"]);
    env.cleanup().await?;
    Ok(())
}
