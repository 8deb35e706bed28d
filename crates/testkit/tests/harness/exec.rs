//! `kubectl exec` into a fake pod runs a local command, as set by a kwok `Exec` rule.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use celld_testkit::{ExecRule, TestEnv, create_running_pod, fake_pod};
use k8s_openapi::api::core::v1::Pod;

use crate::TestResult;

/// Writes an executable shell script `dir/name`.
fn script(dir: &Path, name: &str, body: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n"))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
}

#[tokio::test]
async fn exec_with_stdin_runs_the_rules_command_in_its_dir_and_env() -> TestResult {
    let env = TestEnv::new("exec-stdin").await?;
    create_running_pod(&env.api::<Pod>(), &fake_pod("shell")).await?;
    let dir = env.scratch_dir()?;
    let bin = dir.join("bin");
    script(
        &bin,
        "greet",
        r#"printf '%s %s from %s\n' "$GREETING" "$1" "$(pwd)""#,
    )?;
    ExecRule::for_pod("shell")
        .work_dir(&dir)
        .path([bin.as_path(), Path::new("/usr/bin"), Path::new("/bin")])
        .env("GREETING", "hello")
        .apply(&env.client(), env.namespace())
        .await?;

    let out = env
        .kubectl()
        .run_with_stdin(
            [
                "exec",
                "-i",
                "shell",
                "--",
                "sh",
                "-c",
                r#"read name; greet "$name""#,
            ],
            b"world\n",
        )
        .await?;
    assert_eq!(out, format!("hello world from {}\n", dir.display()));

    // The end of stdin reaches the command (kwok patched), so it can read to EOF.
    let input = vec![b'x'; 1 << 20];
    let out = env
        .kubectl()
        .run_with_stdin(["exec", "-i", "shell", "--", "wc", "-c"], &input)
        .await?;
    assert_eq!(out.trim(), "1048576");
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn exec_reports_the_commands_exit_code() -> TestResult {
    let env = TestEnv::new("exec-exit").await?;
    create_running_pod(&env.api::<Pod>(), &fake_pod("shell")).await?;
    let output = env
        .kubectl()
        .output(
            ["exec", "shell", "--", "sh", "-c", "echo partial; exit 7"],
            None,
        )
        .await?;
    assert_eq!(output.status.code(), Some(7), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "partial\n");
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn exec_of_a_tool_only_on_the_rules_path_goes_through_the_dispatch_shim() -> TestResult {
    let env = TestEnv::new("exec-dispatch").await?;
    create_running_pod(&env.api::<Pod>(), &fake_pod("deployer")).await?;
    let dir = env.scratch_dir()?;
    let bin = dir.join("bin");
    script(
        &bin,
        "celld-testkit-fake-deploy",
        r#"echo "deploying $1: $(cat)""#,
    )?;
    ExecRule::for_pod("deployer")
        .work_dir(&dir)
        .path([bin.as_path(), Path::new("/usr/bin"), Path::new("/bin")])
        .dispatch(["celld-testkit-fake-deploy"])
        .apply(&env.client(), env.namespace())
        .await?;

    let out = env
        .kubectl()
        .run_with_stdin(
            [
                "exec",
                "-i",
                "deployer",
                "--",
                "celld-testkit-fake-deploy",
                "v1",
            ],
            b"payload",
        )
        .await?;
    assert_eq!(out, "deploying v1: payload\n");
    env.cleanup().await?;
    Ok(())
}
