//! `rollout` and `deploy --waves` against the local control plane, without an operator: the
//! test creates the fleets and a CelldRollout and writes the rollout's status itself, as the
//! operator would. `rollout status` shows it; `pause`, `resume`, `promote` and `abort` set and
//! remove their annotations (read back from the API server); `status -w` returns 0 once the
//! test reports the rollout Succeeded; `deploy --selector --waves --image --dry-run` prints the
//! plan and creates nothing, and without `--dry-run` creates the rollout the flags describe.

use crate::support::{self, TestResult};
use celld_api::{CelldFleet, CelldFleetSpec, CelldRollout};
use celld_testkit::TestEnv;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::time::Duration;

const DIGEST: &str = "sha256:1f0c3e5a7b9d2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e";

/// The image the tests ship.
fn image() -> String {
    format!("registry.example.com/web-worker:1.4.2@{DIGEST}")
}

/// Fleets `web-a`, `web-b` and `web-c` labelled app=web, `web-pinned` pinned, and `billing` of
/// another app, each on its own bucket prefix.
async fn fleets(env: &TestEnv, test: &str) -> TestResult {
    let s3 = env.s3()?;
    for (name, labels) in [
        ("web-a", json!({"app": "web"})),
        ("web-b", json!({"app": "web"})),
        ("web-c", json!({"app": "web"})),
        (
            "web-pinned",
            json!({"app": "web", "platform.celld.dev/rollout-pin": "1.4.1"}),
        ),
        ("billing", json!({"app": "billing"})),
    ] {
        let mut fleet = CelldFleet::new(
            name,
            CelldFleetSpec::with_bucket(support::bucket(&s3, &format!("{test}-{name}"))),
        );
        fleet.metadata.labels = Some(serde_json::from_value(labels)?);
        env.api::<CelldFleet>()
            .create(&PostParams::default(), &fleet)
            .await?;
    }
    Ok(())
}

/// Creates rollout `name` over app=web in three waves (the last one Manual).
async fn rollout(env: &TestEnv, name: &str) -> TestResult<CelldRollout> {
    let rollout: CelldRollout = serde_json::from_value(json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldRollout",
        "metadata": {"name": name},
        "spec": {
            "source": {"image": {"reference": image()}},
            "selector": {"matchLabels": {"app": "web"}},
            "waves": [
                {"fleets": 1, "bake": "10m"},
                {"fleets": "50%", "bake": "10m"},
                {"fleets": "100%", "approval": "Manual"},
            ],
        },
    }))?;
    Ok(env
        .api::<CelldRollout>()
        .create(&PostParams::default(), &rollout)
        .await?)
}

/// What the operator would report with wave 2 of 3 under way, for generation `generation`.
fn under_way(generation: i64, phase: &str) -> Value {
    let now = jiff::Timestamp::now().to_string();
    json!({
        "observedGeneration": generation,
        "phase": phase,
        "target": {"source": {"image": {"reference": image()}}, "revision": image(),
                   "key": "k1", "startedAt": now},
        "wave": "2/3",
        "currentWave": 2,
        "moved": "1/3",
        "waves": [
            {"number": 1, "phase": "Passed", "startedAt": now,
             "fleets": [{"name": "web-a", "phase": "Adopted", "from": "00000000000000a1",
                         "to": "0123456789abcdef", "adopted": "2/2"}]},
            {"number": 2, "phase": "Publishing", "startedAt": now,
             "fleets": [{"name": "web-b", "phase": "Publishing", "from": "00000000000000a1",
                         "to": "0123456789abcdef", "adopted": "0/2",
                         "message": "2 nodes still serve 00000000000000a1"}]},
            {"number": 3, "phase": "Pending"},
        ],
        "skipped": [{"name": "web-pinned", "reason": "Pinned",
                     "message": "CelldFleet web-pinned carries the label platform.celld.dev/rollout-pin=1.4.1"}],
        "conditions": [{"type": "Reconciling", "status": "True", "reason": "WaveStarted",
                        "message": "wave 2 of 3 is under way", "lastTransitionTime": now}],
    })
}

/// Writes `status` through the status subresource, as the operator does.
async fn report(env: &TestEnv, name: &str, status: Value) -> TestResult {
    env.api::<CelldRollout>()
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await?;
    Ok(())
}

/// The annotation `key` of rollout `name`, as the API server holds it.
async fn annotation(env: &TestEnv, name: &str, key: &str) -> TestResult<Option<String>> {
    let rollout = env.api::<CelldRollout>().get(name).await?;
    Ok(rollout.metadata.annotations.and_then(|mut a| a.remove(key)))
}

#[tokio::test]
async fn rollout_status_shows_it_and_pause_resume_promote_abort_annotate_it() -> TestResult {
    let env = support::env("plugin-rollout").await?;
    fleets(&env, "rollout").await?;
    rollout(&env, "web").await?;
    report(&env, "web", under_way(1, "Progressing")).await?;

    let run = support::run(&env, &["rollout", "status", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    for want in [
        "Phase:       Progressing, wave 2/3".to_string(),
        format!("Revision:    {}", image()),
        "Fleets:      1/3 on the new version".into(),
        "web-a   Adopted".into(),
        "00000000000000a1 → 0123456789abcdef".into(),
        "2 nodes still serve 00000000000000a1".into(),
        "web-pinned   Pinned".into(),
    ] {
        assert!(run.stdout.contains(&want), "no {want:?} in\n{run}");
    }
    let run = support::run(&env, &["rollout", "status", "web", "-o", "json"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["phase"], "Progressing");
    assert_eq!(doc["waves"][1]["fleets"][0]["name"], "web-b");

    let run = support::run(&env, &["rollout", "status", "wbe"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("did you mean web?"), "{run}");

    // Pause and resume: the annotation, its value the reason.
    let paused = celld_api::labels::ROLLOUT_PAUSED;
    let run = support::run(
        &env,
        &["rollout", "pause", "web", "--reason", "incident 42"],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("paused"), "{run}");
    assert_eq!(
        annotation(&env, "web", paused).await?.as_deref(),
        Some("incident 42")
    );
    let run = support::run(&env, &["rollout", "status", "web"]).await?;
    assert!(
        run.stdout
            .contains("Paused:      annotation platform.celld.dev/rollout-paused: incident 42"),
        "{run}"
    );
    let run = support::run(&env, &["rollout", "resume", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("resumed"), "{run}");
    assert_eq!(annotation(&env, "web", paused).await?, None);

    // Paused in its spec too: resume removes the annotation and says the spec keeps it paused.
    env.api::<CelldRollout>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await?;
    let run = support::run(&env, &["rollout", "pause", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let reason = annotation(&env, "web", paused).await?.unwrap_or_default();
    assert!(
        reason.starts_with("paused with kubectl celld at "),
        "{reason}"
    );
    let run = support::run(&env, &["rollout", "resume", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains("it stays paused: its spec.paused is true"),
        "{run}"
    );
    assert_eq!(annotation(&env, "web", paused).await?, None);

    // Promote: by default the wave after the current one, with the time.
    let promote = celld_api::labels::PROMOTE_WAVE;
    let run = support::run(&env, &["rollout", "promote", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("promoted up to wave 3"), "{run}");
    let value = annotation(&env, "web", promote).await?.unwrap_or_default();
    assert!(value.starts_with("3 "), "{value}");
    let run = support::run(&env, &["rollout", "promote", "web", "--wave", "2"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let value = annotation(&env, "web", promote).await?.unwrap_or_default();
    assert!(value.starts_with("2 "), "{value}");
    let run = support::run(&env, &["rollout", "promote", "web", "--wave", "4"]).await?;
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("no wave 4"), "{run}");

    // Abort: the annotation, its value the reason.
    let run = support::run(
        &env,
        &["rollout", "abort", "web", "--reason", "errors in wave 2"],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("aborted"), "{run}");
    assert_eq!(
        annotation(&env, "web", celld_api::labels::ROLLOUT_ABORT)
            .await?
            .as_deref(),
        Some("errors in wave 2")
    );
    Ok(())
}

#[tokio::test]
async fn status_watch_returns_0_once_the_rollout_succeeded_and_1_when_it_rolled_back() -> TestResult
{
    let env = support::env("plugin-rollout-watch").await?;
    fleets(&env, "rollout-watch").await?;
    rollout(&env, "web").await?;
    report(&env, "web", under_way(1, "Progressing")).await?;

    let mut child = support::plugin(&env, &["rollout", "status", "web", "-w"]).spawn()?;
    let (out, _task) = support::collect(child.stdout.take().ok_or("stdout")?, None);
    support::wait_text(&out, "Progressing, wave 2/3", Duration::from_secs(30)).await?;
    assert!(
        tokio::time::timeout(Duration::from_secs(3), child.wait())
            .await
            .is_err(),
        "the watch goes on while the rollout is under way"
    );
    let mut done = under_way(1, "Succeeded");
    done["wave"] = json!("3/3");
    done["currentWave"] = json!(3);
    report(&env, "web", done).await?;
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await??;
    support::wait_text(&out, "Phase:       Succeeded", Duration::from_secs(5)).await?;
    assert_eq!(
        status.code(),
        Some(0),
        "{}",
        out.lock().map(|o| o.clone()).unwrap_or_default()
    );

    rollout(&env, "api").await?;
    let mut rolled_back = under_way(1, "RolledBack");
    rolled_back["conditions"] = json!([{"type": "Stalled", "status": "True", "reason": "RolledBack",
        "message": "wave 2 failed: CelldFleet web-b: node web-b-0 refused the version",
        "lastTransitionTime": jiff::Timestamp::now().to_string()}]);
    report(&env, "api", rolled_back).await?;
    let run = support::run(&env, &["rollout", "status", "api", "-w"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("ended RolledBack: RolledBack: wave 2 failed: CelldFleet web-b"),
        "{run}"
    );
    Ok(())
}

#[tokio::test]
async fn deploy_with_waves_prints_the_plan_then_creates_the_rollout() -> TestResult {
    let env = support::env("plugin-rollout-deploy").await?;
    fleets(&env, "rollout-deploy").await?;
    let image = image();
    let args = [
        "deploy",
        "--selector",
        "app=web",
        "--waves",
        "1,100%",
        "--bake",
        "1m",
        "--image",
        &image,
    ];

    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let run = support::run(&env, &dry).await?;
    assert_eq!(run.code, 0, "{run}");
    for want in [
        format!(
            "CelldRollout {}/web-worker ships image {image} to 3 fleets in 2 waves:",
            env.namespace()
        ),
        "Wave 1 (up to 1, bake 1m): 1 fleet\n  web-a\n".into(),
        "Wave 2 (up to 100%, bake 1m): 2 fleets\n  web-b\n  web-c\n".into(),
        "web-pinned   Pinned".into(),
        "Dry run: nothing was created".into(),
        "kind: CelldRollout".into(),
    ] {
        assert!(run.stdout.contains(&want), "no {want:?} in\n{run}");
    }
    assert!(!run.stdout.contains("billing"), "{run}");
    let rollouts = env.api::<CelldRollout>();
    assert!(
        rollouts.get_opt("web-worker").await?.is_none(),
        "a dry run creates nothing"
    );

    let run = support::run(&env, &args).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains("celldrollout.platform.celld.dev/web-worker created"),
        "{run}"
    );
    let created = rollouts.get("web-worker").await?;
    let source = created
        .spec
        .source
        .image
        .as_ref()
        .ok_or("no image source")?;
    assert_eq!(source.reference, image);
    assert_eq!(source.layout, celld_api::ImageLayout::Deployer);
    assert_eq!(
        serde_json::to_value(&created.spec.selector)?,
        json!({"matchLabels": {"app": "web"}})
    );
    let waves: Vec<(Value, &str)> = created
        .spec
        .waves
        .iter()
        .map(|w| {
            (
                serde_json::to_value(&w.fleets).unwrap_or_default(),
                w.bake.as_str(),
            )
        })
        .collect();
    assert_eq!(waves, [(json!(1), "1m"), (json!("100%"), "1m")]);
    assert_eq!(
        created.spec.gates.progress_deadline, "15m",
        "the API server's default"
    );

    let run = support::run(&env, &args).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains("celldrollout.platform.celld.dev/web-worker unchanged"),
        "{run}"
    );

    // A local build is refused, and nothing is created.
    let run = support::run(
        &env,
        &[
            "deploy",
            ".",
            "--selector",
            "app=web",
            "--waves",
            "1,100%",
            "--name",
            "local",
        ],
    )
    .await?;
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .contains("a rollout ships an image or a Flux source, not a local build"),
        "{run}"
    );
    assert!(rollouts.get_opt("local").await?.is_none());
    Ok(())
}
