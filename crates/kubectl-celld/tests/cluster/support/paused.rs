//! Commands that start a deploy pod, with the plugin paused (SIGSTOP) the moment it created its
//! Job until a kwok Exec rule is in place for the Job's pod, so that every exec of the plugin
//! runs what the rule says.

use super::plugin_run::{Run, collect, collect_with, pause, plugin, wait_line};
use super::{FakeTools, RUN_TIMEOUT, TestResult};
use celld_api::labels;
use celld_testkit::{Check, DeployDouble, ExecRule, TestEnv, wait_until};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::ListParams;
use std::time::Duration;

/// What the plugin says once it created its deploy Job.
const CREATED_JOB: &str = "Created Job";

/// The Job a `Created Job NS/NAME (image ...)` progress line names.
pub fn created_job(line: &str) -> TestResult<String> {
    line.split_whitespace()
        .skip_while(|word| *word != "Job")
        .nth(1)
        .and_then(|qualified| qualified.rsplit('/').next())
        .map(str::to_string)
        .ok_or_else(|| format!("no Job name in {line:?}").into())
}

/// The Running deploy pod of `fleet` that Job `job` created (not a pod of an earlier command's
/// Job, which may still be terminating).
pub async fn deploy_pod(env: &TestEnv, fleet: &str, job: &str) -> TestResult<String> {
    let pods: Api<Pod> = env.api();
    let selector = format!(
        "{}={fleet},{}={},batch.kubernetes.io/job-name={job}",
        labels::FLEET,
        labels::ROLE,
        labels::ROLE_DEPLOY
    );
    let name = wait_until(
        format!("the deploy pod of fleet {fleet} (Job {job}) to run"),
        Duration::from_secs(60),
        || async {
            match pods.list(&ListParams::default().labels(&selector)).await {
                Ok(list) => match list.items.iter().find(|p| {
                    p.metadata.deletion_timestamp.is_none()
                        && celld_testkit::is_running_and_ready(p)
                }) {
                    Some(p) => Check::Done(p.metadata.name.clone().unwrap_or_default()),
                    None => {
                        Check::Pending(format!("{} deploy pods, none running", list.items.len()))
                    }
                },
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    Ok(name)
}

/// Runs `deploy` (args after `deploy`) with the fake tools: the plugin is paused (SIGSTOP) as
/// soon as it created its Job, until kwok applies an Exec rule for the Job's pod, so that every
/// exec of the plugin runs the fake tools. Returns the finished run.
pub async fn deploy(
    env: &TestEnv,
    tools: &FakeTools,
    fleet: &str,
    args: &[&str],
) -> TestResult<Run> {
    deploy_with(env, fleet, args, |pod| tools.rule(pod)).await
}

/// [`deploy`] with a custom Exec rule.
pub async fn deploy_with(
    env: &TestEnv,
    fleet: &str,
    args: &[&str],
    rule: impl FnOnce(&str) -> ExecRule,
) -> TestResult<Run> {
    deploy_paused(env, fleet, args, async |pod: String| {
        rule(&pod).apply(&env.client(), env.namespace()).await?;
        Ok(())
    })
    .await
}

/// [`deploy_with`] of the Worker in `dir` to the fleet `web`, the one most tests set up.
pub async fn deploy_web(
    env: &TestEnv,
    dir: &std::path::Path,
    rule: impl FnOnce(&str) -> ExecRule,
) -> TestResult<Run> {
    let dir = dir.to_str().ok_or("the Worker's path is not UTF-8")?;
    deploy_with(env, "web", &[dir, "--fleet", "web"], rule).await
}

/// Runs `deploy` with the test double of `celld deploy` in the deploy pod (see
/// [`celld_testkit::DeployDouble`]).
pub async fn deploy_double(
    env: &TestEnv,
    double: &DeployDouble,
    fleet: &str,
    args: &[&str],
) -> TestResult<Run> {
    deploy_paused(env, fleet, args, async |pod: String| {
        double.wire(&env.client(), env.namespace(), &pod).await?;
        Ok(())
    })
    .await
}

/// Runs `deploy` (args after `deploy`), pausing the plugin (SIGSTOP) as soon as it created its
/// Job until `wire` has put an Exec rule in place for the Job's pod (whose name it gets), so
/// that every exec of the plugin runs what the rule says. Returns the finished run.
pub async fn deploy_paused(
    env: &TestEnv,
    fleet: &str,
    args: &[&str],
    wire: impl AsyncFnOnce(String) -> TestResult,
) -> TestResult<Run> {
    let mut full = vec!["deploy"];
    full.extend_from_slice(args);
    command_paused(env, fleet, &full, wire).await
}

/// Runs any command that starts a deploy pod (`deploy`, `history`, `rollback`; `args` from the
/// command's name on), paused like [`deploy_paused`] until `wire` has put an Exec rule in place.
pub async fn command_paused(
    env: &TestEnv,
    fleet: &str,
    full: &[&str],
    wire: impl AsyncFnOnce(String) -> TestResult,
) -> TestResult<Run> {
    command_paused_pid(env, fleet, full, async |pod: String, _pid: u32| {
        wire(pod).await
    })
    .await
}

/// [`command_paused`], with `wire` also given the plugin's process id.
pub async fn command_paused_pid(
    env: &TestEnv,
    fleet: &str,
    full: &[&str],
    wire: impl AsyncFnOnce(String, u32) -> TestResult,
) -> TestResult<Run> {
    let mut child = plugin(env, full).spawn()?;
    let pid = child.id().ok_or("the plugin exited at once")?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
    let mut stop_tx = Some(stop_tx);
    let (stderr, err_task) = collect_with(
        child.stderr.take().ok_or("no stderr")?,
        Some(tx),
        move |line| {
            if line.contains(CREATED_JOB)
                && let Some(stopped) = stop_tx.take()
            {
                let _ = stopped.send(pause(pid, true));
            }
        },
    );
    let (stdout, out_task) = collect(child.stdout.take().ok_or("no stdout")?, None);

    let created = wait_line(&mut rx, CREATED_JOB, Duration::from_secs(60)).await;
    let ruled = match created.and_then(|line| created_job(&line)) {
        Ok(job) => {
            stop_rx
                .await
                .map_err(|_| "the plugin's stderr ended before it was stopped")??;
            let applied = match deploy_pod(env, fleet, &job).await {
                Ok(pod) => wire(pod, pid).await,
                Err(e) => Err(e),
            };
            pause(pid, false)?;
            applied
        }
        Err(e) => Err(e),
    };
    let status = match tokio::time::timeout(RUN_TIMEOUT, child.wait()).await {
        Ok(s) => s.ok(),
        Err(_) => {
            let _ = child.kill().await;
            None
        }
    };
    let _ = tokio::join!(err_task, out_task);
    let run = Run {
        code: status.and_then(|s| s.code()).unwrap_or(-1),
        stdout: stdout.lock().map(|s| s.clone()).unwrap_or_default(),
        stderr: stderr.lock().map(|s| s.clone()).unwrap_or_default(),
    };
    if let Err(e) = ruled {
        return Err(format!("setting up the deploy pod's Exec rule failed: {e}\n{run}").into());
    }
    Ok(run)
}

/// Runs a command that starts a deploy pod of `fleet` (`args` from the command's name on) with
/// the double's Exec rule (`celld-bucket`, which `history` and `rollback` reach the bucket with)
/// plus this machine's tools (curl, which `rollback` asks the nodes to reload with) on the
/// pod's PATH.
pub async fn with_curl(
    env: &TestEnv,
    double: &DeployDouble,
    fleet: &str,
    args: &[&str],
) -> TestResult<Run> {
    command_paused(env, fleet, args, async |name: String| {
        let pod = env.api::<Pod>().get(&name).await?;
        double
            .rule(&env.client(), &pod)
            .await?
            .path([double.bin_dir(), "/usr/bin".into(), "/bin".into()])
            .apply(&env.client(), env.namespace())
            .await?;
        Ok(())
    })
    .await
}

#[test]
fn created_job_reads_the_progress_line() {
    assert_eq!(
        created_job("Created Job apps/web-deploy-fk64h (image celld-deployer:latest)").unwrap(),
        "web-deploy-fk64h"
    );
    assert!(created_job("Created nothing").is_err());
}
