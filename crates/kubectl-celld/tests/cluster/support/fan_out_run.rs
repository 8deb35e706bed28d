//! A fan-out deploy with every deploy pod it creates wired to an Exec rule: the plugin is
//! stopped (SIGSTOP) the moment it says it created a Job, and goes on (SIGCONT) once every Job
//! it announced so far has its pod wired, so that no exec of the plugin reaches a pod before
//! its rule is in place.

use super::TestResult;
use super::paused::{created_job, deploy_pod};
use super::plugin_run::{Run, collect, collect_with, pause, plugin};
use celld_testkit::TestEnv;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the plugin says once it created a deploy Job.
const CREATED_JOB: &str = "Created Job";

/// Longest a fan-out run may take.
pub const FAN_OUT_TIMEOUT: Duration = Duration::from_secs(420);

/// The fleet of a fan-out progress line: `[NAMESPACE/FLEET] ...`.
pub fn fleet_of(line: &str) -> TestResult<String> {
    line.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(qualified, _)| qualified.rsplit_once('/'))
        .map(|(_, fleet)| fleet.to_string())
        .ok_or_else(|| format!("no [NAMESPACE/FLEET] prefix in {line:?}").into())
}

/// Runs the plugin with `args` (from the command's name on); `wire` gets each deploy pod's
/// fleet and name, and the plugin's process id, and puts the pod's Exec rule in place.
pub async fn fan_out_wired(
    env: &TestEnv,
    args: &[&str],
    wire: impl AsyncFn(String, String, u32) -> TestResult,
) -> TestResult<Run> {
    let mut child = plugin(env, args).spawn()?;
    let pid = child.id().ok_or("the plugin exited at once")?;
    // Jobs announced and not yet wired; the plugin runs only while there are none.
    let pending = Arc::new(Mutex::new(0usize));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let announced = Arc::clone(&pending);
    let (stderr, err_task) =
        collect_with(child.stderr.take().ok_or("no stderr")?, None, move |line| {
            if line.contains(CREATED_JOB)
                && let Ok(mut n) = announced.lock()
            {
                *n += 1;
                let _ = pause(pid, true);
                let _ = tx.send(line.to_string());
            }
        });
    let (stdout, out_task) = collect(child.stdout.take().ok_or("no stdout")?, None);

    let wiring = async {
        let mut first_error: Option<String> = None;
        while let Some(line) = rx.recv().await {
            let wired = async {
                let job = created_job(&line)?;
                let fleet = fleet_of(&line)?;
                let pod = deploy_pod(env, &fleet, &job).await?;
                wire(fleet, pod, pid).await
            }
            .await;
            if let Err(e) = wired {
                first_error.get_or_insert(format!("wiring the pod of {line:?} failed: {e}"));
            }
            let resume = pending.lock().map(|mut n| {
                *n -= 1;
                *n == 0
            });
            if resume.unwrap_or(true) {
                pause(pid, false)?;
            }
        }
        first_error.map_or(Ok(()), |e| Err(e.into()))
    };
    let ending = async {
        match tokio::time::timeout(FAN_OUT_TIMEOUT, child.wait()).await {
            Ok(status) => status.ok(),
            Err(_) => {
                let _ = child.kill().await;
                None
            }
        }
    };
    let (wired, status): (TestResult, _) = tokio::join!(wiring, ending);
    let _ = tokio::join!(err_task, out_task);
    let run = Run {
        code: status.and_then(|s| s.code()).unwrap_or(-1),
        stdout: stdout.lock().map(|s| s.clone()).unwrap_or_default(),
        stderr: stderr.lock().map(|s| s.clone()).unwrap_or_default(),
    };
    if let Err(e) = wired {
        return Err(format!("{e}\n{run}").into());
    }
    Ok(run)
}

#[test]
fn fleet_of_reads_the_prefix() {
    assert_eq!(
        fleet_of("[apps/pay-07] Created Job apps/pay-07-deploy-x (image i)").unwrap(),
        "pay-07"
    );
    assert!(fleet_of("Created Job apps/x").is_err());
}
