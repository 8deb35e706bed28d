//! `logs` against the real API server: every node pod at once, each line prefixed, `--tail`,
//! `--timestamps`, and `--follow` picking up new lines and a pod that starts later (kwok serves
//! each pod's log from a file through a Logs rule).

use crate::support::{self, TestResult};
use celld_testkit::{LogsRule, append_cri_log, write_cri_log};
use std::time::Duration;

#[tokio::test]
async fn logs_of_every_pod_then_follow_picks_up_new_lines_and_new_pods() -> TestResult {
    let env = support::env("plugin-logs").await?;
    support::fleet(&env, "web", "any", &support::bucket(&env.s3()?, "logs")).await?;
    let dir = env.scratch_dir()?;
    let web0 = dir.join("web-0.log");
    let web1 = dir.join("web-1.log");
    write_cri_log(&web0, &["boot 0", "ready 0"])?;
    let many: Vec<String> = (1..=12).map(|i| format!("line {i} of 1")).collect();
    write_cri_log(&web1, &many)?;
    for (pod, file) in [("web-0", &web0), ("web-1", &web1)] {
        support::node_pod(&env, "web", pod).await?;
        LogsRule::for_pod(pod, file)
            .apply(&env.client(), env.namespace())
            .await?;
    }
    // A pod of another fleet is not shown.
    support::node_pod(&env, "other", "other-0").await?;

    // Without --follow: pod by pod, the last 10 lines of each.
    let run = support::run(&env, &["logs", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let mut want = vec!["[web-0] boot 0".to_string(), "[web-0] ready 0".into()];
    want.extend((3..=12).map(|i| format!("[web-1] line {i} of 1")));
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), want, "{run}");

    let run = support::run(&env, &["logs", "web", "--tail", "1", "--timestamps"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{run}");
    assert!(
        lines[0].starts_with("[web-0] 20") && lines[0].ends_with(" ready 0"),
        "{run}"
    );
    assert!(
        lines[1].starts_with("[web-1] 20") && lines[1].ends_with(" line 12 of 1"),
        "{run}"
    );

    // --follow: both pods at once, new lines, and a pod that starts later.
    let mut child = support::plugin(&env, &["logs", "web", "-f", "--tail", "2"]).spawn()?;
    let pid = child.id().ok_or("exited")?;
    let (out, _task) = support::collect(child.stdout.take().ok_or("stdout")?, None);
    let (err, _etask) = support::collect(child.stderr.take().ok_or("stderr")?, None);
    let wait = Duration::from_secs(30);
    let result = async {
        support::wait_text(&out, "[web-0] ready 0", wait).await?;
        support::wait_text(&out, "[web-1] line 12 of 1", wait).await?;
        append_cri_log(&web0, &["request 1 served"])?;
        support::wait_text(&out, "[web-0] request 1 served", wait).await?;

        // A scale-up while following: the plugin is paused until the new pod's Logs rule is in
        // place, so it reads the rule's file (not kwok's default log).
        let web2 = dir.join("web-2.log");
        write_cri_log(&web2, &["boot 2"])?;
        support::pause(pid, true)?;
        let made = async {
            support::node_pod(&env, "web", "web-2").await?;
            LogsRule::for_pod("web-2", &web2)
                .apply(&env.client(), env.namespace())
                .await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        }
        .await;
        support::pause(pid, false)?;
        made?;
        support::wait_text(&out, "[web-2] boot 2", wait).await?;
        append_cri_log(&web2, &["request 2 served"])?;
        support::wait_text(&out, "[web-2] request 2 served", wait).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    }
    .await;
    let _ = child.kill().await;
    let stdout = out.lock().map(|s| s.clone()).unwrap_or_default();
    let stderr = err.lock().map(|s| s.clone()).unwrap_or_default();
    if let Err(e) = result {
        return Err(format!("{e}\n--- stdout\n{stdout}--- stderr\n{stderr}").into());
    }
    assert!(!stdout.contains("[other-0]"), "{stdout}");
    assert!(
        !stdout.contains("line 10 of 1"),
        "--tail 2 applies to pods already running:\n{stdout}"
    );
    env.cleanup().await?;
    Ok(())
}

/// Labels fleet `name` of `env`'s namespace with `team=<team>`.
async fn label(env: &celld_testkit::TestEnv, name: &str, team: &str) -> TestResult {
    env.api::<celld_api::CelldFleet>()
        .patch(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(serde_json::json!({"metadata": {"labels": {"team": team}}})),
        )
        .await?;
    Ok(())
}

/// A node pod of `fleet` whose log is `lines`.
async fn logging_pod(
    env: &celld_testkit::TestEnv,
    fleet: &str,
    pod: &str,
    lines: &[&str],
) -> TestResult<std::path::PathBuf> {
    let file = env.scratch_dir()?.join(format!("{pod}.log"));
    write_cri_log(&file, lines)?;
    support::node_pod(env, fleet, pod).await?;
    LogsRule::for_pod(pod, &file)
        .apply(&env.client(), env.namespace())
        .await?;
    Ok(file)
}

#[tokio::test]
async fn logs_of_the_fleets_a_selector_picks_in_the_namespace_or_in_all() -> TestResult {
    let here = support::env("plugin-logs-sel").await?;
    let there = support::env("plugin-logs-sel2").await?;
    let (a, b) = (here.namespace().to_string(), there.namespace().to_string());
    // A label value no other test's fleets carry, so -A sees only these.
    let team = format!("t-{}", a.rsplit('-').next().unwrap_or("x"));
    let bucket = support::bucket(&here.s3()?, "logs-sel");
    // Picked: web here and api there. Not picked: api here, which shares a name with a picked
    // fleet of the other namespace.
    support::fleet(&here, "web", "any", &bucket).await?;
    support::fleet(&here, "api", "any", &bucket).await?;
    support::fleet(&there, "api", "any", &bucket).await?;
    label(&here, "web", &team).await?;
    label(&there, "api", &team).await?;
    logging_pod(&here, "web", "web-0", &["web here"]).await?;
    logging_pod(&here, "api", "api-0", &["api here"]).await?;
    let api_there = logging_pod(&there, "api", "api-0", &["api there"]).await?;
    let selector = format!("team={team}");

    let run = support::run(&here, &["logs", "-l", &selector]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout, "[web-0] web here\n", "{run}");

    let run = support::run(&here, &["logs", "-l", &selector, "-A"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    lines.sort_unstable();
    let mut want = vec![
        format!("[{a}/web-0] web here"),
        format!("[{b}/api-0] api there"),
    ];
    want.sort_unstable();
    assert_eq!(lines, want, "{run}");

    let run = support::run(&here, &["logs", "-l", "team=nobody"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.is_empty(), "{run}");
    assert!(
        run.stderr.contains(&format!(
            "No CelldFleets found in namespace {a} matching team=nobody"
        )),
        "{run}"
    );

    // Following across namespaces: new lines of a picked fleet, never the unpicked one.
    let mut child = support::plugin(&here, &["logs", "-l", &selector, "-A", "-f"]).spawn()?;
    let (out, _task) = support::collect(child.stdout.take().ok_or("stdout")?, None);
    let (err, _etask) = support::collect(child.stderr.take().ok_or("stderr")?, None);
    let wait = Duration::from_secs(30);
    let result = async {
        support::wait_text(&out, &format!("[{a}/web-0] web here"), wait).await?;
        support::wait_text(&out, &format!("[{b}/api-0] api there"), wait).await?;
        append_cri_log(&api_there, &["request served there"])?;
        support::wait_text(&out, &format!("[{b}/api-0] request served there"), wait).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    }
    .await;
    let _ = child.kill().await;
    let stdout = out.lock().map(|s| s.clone()).unwrap_or_default();
    let stderr = err.lock().map(|s| s.clone()).unwrap_or_default();
    if let Err(e) = result {
        return Err(format!("{e}\n--- stdout\n{stdout}--- stderr\n{stderr}").into());
    }
    assert!(!stdout.contains("api here"), "{stdout}");
    assert!(
        stderr.contains(&format!("Following the logs of fleets {a}/web, {b}/api"))
            || stderr.contains(&format!("Following the logs of fleets {b}/api, {a}/web")),
        "{stderr}"
    );
    here.cleanup().await?;
    there.cleanup().await?;
    Ok(())
}
