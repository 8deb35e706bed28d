//! The celld version of spec.image decides what the operator does: a variable that version
//! refuses at startup is refused at admission when the tag names the version; when it cannot be
//! known (a digest alone, `latest`), Degraded and one Warning Event name the variable and the
//! release before the nodes crash-loop; so does 0.4.1's bound of the drain-token wait, which no
//! admission rule can afford. Each version gets the probes its readiness gate needs: the
//! kubelet's rule (kwok runs no probes) applied to the probes as applied restarts no node the
//! gate holds, and would have restarted a 0.5.1 node under the probe written for 0.4.0.

use crate::support::*;
use celld_api::contract::releases::Gate;
use celld_testkit::Check;
use celld_testkit::wait_until;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Container, HTTPGetAction, Probe};
use serde_json::json;

const DIGEST: &str = "sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b";

#[tokio::test]
async fn env_a_known_version_refuses_is_refused_at_admission_with_the_replacement() {
    let (env, op) = env_with_operator("envadmit").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "envadmit");
    let extra = json!({
        "image": "ghcr.io/denoland/celld:v0.5.1",
        "env": [{"name": "CELLD_OTEL_SINK", "value": "stdout"}],
    });
    let fleet = inline_fleet("otel", &s3, &prefix, extra).expect("a CelldFleet");
    let refused = env
        .api::<celld_api::CelldFleet>()
        .create(&Default::default(), &fleet)
        .await
        .expect_err("admission refuses CELLD_OTEL_SINK on v0.5.1");
    let message = refused.to_string();
    assert!(
        message.contains("celld v0.5.0 and later refuse CELLD_OTEL_SINK at startup")
            && message.contains("use CELLD_OTEL=1 or CELLD_OTEL=<collector URL>"),
        "{message}"
    );
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn env_an_unknown_version_may_refuse_is_reported_once_and_healed() {
    let (env, op) = env_with_operator("envunknown").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "envunknown");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000b1").await;
    let image = format!("ghcr.io/denoland/celld@{DIGEST}");
    let extra = json!({"image": image, "env": [{"name": "CELLD_VAR_API_KEY", "value": "k"}]});
    apply_fleet(
        &env,
        &inline_fleet("pinned", &s3, &prefix, extra).expect("a CelldFleet"),
    )
    .await;

    let fleet = wait_condition(&env, "pinned", "Degraded", "True", Some("EnvRefused")).await;
    let degraded =
        celld_api::conditions::find(&fleet.status.expect("status").conditions, "Degraded")
            .expect("Degraded")
            .message
            .clone();
    assert!(
        degraded.contains("celld v0.6.0 and later refuse CELLD_VAR_API_KEY at startup")
            && degraded.contains("it is pinned by digest alone")
            && degraded.contains("the Worker's vars"),
        "{degraded}"
    );
    // The children are applied all the same: the nodes run what the fleet asks for.
    let sts: StatefulSet = env.api().get("pinned").await.expect("the StatefulSet");
    let template = sts.spec.expect("spec").template.spec.expect("pod spec");
    assert_eq!(
        template.containers[0].image.as_deref(),
        Some(image.as_str())
    );
    assert!(
        template.containers[0].startup_probe.is_none(),
        "an unknown version gets no startup probe that could restart a node held at the gate"
    );
    // One Warning, not one per reconcile.
    wait_condition(&env, "pinned", "Progressing", "False", None).await;
    let warnings = wait_events(&env, "pinned", "Warning", "EnvRefused").await;
    assert_eq!(warnings.len(), 1, "{warnings:#?}");

    apply_fleet(
        &env,
        &inline_fleet("pinned", &s3, &prefix, json!({"image": image, "env": []}))
            .expect("a CelldFleet"),
    )
    .await;
    wait_condition(&env, "pinned", "Degraded", "False", Some("AsExpected")).await;
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn a_short_shutdown_bound_on_v0_4_1_is_reported_with_the_bound_it_needs() {
    let (env, op) = env_with_operator("tokenwait").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "tokenwait");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, "00000000000000b3").await;
    let extra = json!({
        "image": "ghcr.io/denoland/celld:v0.4.1",
        "env": [{"name": "CELLD_SHUTDOWN_TOTAL_MS", "value": "30000"}],
    });
    // Admitted (its rule would cost more than the API server allows), reported by the operator.
    apply_fleet(
        &env,
        &inline_fleet("short", &s3, &prefix, extra).expect("a CelldFleet"),
    )
    .await;
    let fleet = wait_condition(&env, "short", "Degraded", "True", Some("EnvRefused")).await;
    let degraded =
        celld_api::conditions::find(&fleet.status.expect("status").conditions, "Degraded")
            .expect("Degraded")
            .message
            .clone();
    assert_eq!(
        degraded,
        "spec.env: celld v0.4.1 stops at startup when CELLD_DRAIN_TOKEN_WAIT_MS (30000) is above ¾ of CELLD_SHUTDOWN_TOTAL_MS (30000): set CELLD_SHUTDOWN_TOTAL_MS to at least 40000 or lower CELLD_DRAIN_TOKEN_WAIT_MS"
    );
    // The Event follows the status write; a rollout's later writes give it time.
    wait_condition(&env, "short", "Ready", "True", None).await;
    let warnings = wait_events(&env, "short", "Warning", "EnvRefused").await;
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

/// The longest a node of celld `tag` waits at the readiness gate in these tests: the fall-open
/// bound of its release, or a fleet that takes ten minutes to settle when the gate never opens
/// by timeout.
fn gate_hold(tag: &str) -> i32 {
    let version = celld_api::contract::version::image_version(&format!("celld:{tag}"))
        .expect("a version tag");
    match celld_api::contract::releases::Rules::of(&version).gate {
        Gate::FallsOpen { after_s } => i32::try_from(after_s).expect("seconds"),
        Gate::HeldUntilSettled => 600,
    }
}

/// Whether the kubelet restarts `container` while celld's health path answers 503 for `hold`
/// seconds: a startup probe, or a liveness probe (which runs from the start without one), on
/// the health path that fails through its threshold within the hold. Readiness never restarts.
fn restarted_while_gated(container: &Container, hold: i32) -> bool {
    let on_health = |p: &&Probe| {
        p.http_get
            .as_ref()
            .is_some_and(|g| g.path.as_deref() == Some(celld_api::contract::HEALTH_PATH))
    };
    let gives_up = |p: &Probe| {
        p.initial_delay_seconds.unwrap_or(0)
            + p.failure_threshold.unwrap_or(3) * p.period_seconds.unwrap_or(10)
    };
    let startup = container.startup_probe.as_ref().filter(on_health);
    let liveness = container.liveness_probe.as_ref().filter(on_health);
    startup.is_some_and(|p| gives_up(p) <= hold)
        || (startup.is_none() && liveness.is_some_and(|p| gives_up(p) <= hold))
}

#[test]
fn the_gate_rule_catches_the_probe_written_for_v0_4_0() {
    let health = |threshold| Probe {
        http_get: Some(HTTPGetAction {
            path: Some(celld_api::contract::HEALTH_PATH.into()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(5),
        failure_threshold: Some(threshold),
        ..Probe::default()
    };
    let old = Container {
        startup_probe: Some(health(36)),
        ..Container::default()
    };
    assert!(!restarted_while_gated(&old, gate_hold("v0.4.0")));
    assert!(
        restarted_while_gated(&old, gate_hold("v0.5.1")),
        "0.4.0's startup probe restarts a 0.5.1 node the gate holds"
    );
    let liveness = Container {
        liveness_probe: Some(health(3)),
        ..Container::default()
    };
    assert!(restarted_while_gated(&liveness, gate_hold("v0.4.0")));
}

#[tokio::test]
async fn each_version_gets_the_startup_probe_its_readiness_gate_needs() {
    let (env, op) = env_with_operator("probes").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "probes");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    for (name, tag, startup) in [
        ("gate-040", "v0.4.0", Some(36)),
        ("gate-051", "v0.5.1", None),
        ("gate-061", "v0.6.1", None),
    ] {
        // A prefix each: two fleets may not share one.
        let prefix = format!("{prefix}/{name}");
        publish_pointer(&s3, &prefix, "00000000000000b2").await;
        let extra = json!({"image": format!("ghcr.io/denoland/celld:{tag}")});
        apply_fleet(
            &env,
            &inline_fleet(name, &s3, &prefix, extra).expect("a CelldFleet"),
        )
        .await;
        let container = wait_until(&format!("the StatefulSet of {name}"), TIMEOUT, || async {
            match env.api::<StatefulSet>().get_opt(name).await {
                Ok(Some(sts)) => match sts
                    .spec
                    .and_then(|s| s.template.spec)
                    .and_then(|p| p.containers.into_iter().next())
                {
                    Some(c) => Check::Done(c),
                    None => Check::Pending("no container".into()),
                },
                other => Check::Pending(format!("{other:?}")),
            }
        })
        .await
        .expect("the StatefulSet is applied");
        let threshold = container
            .startup_probe
            .as_ref()
            .map(|p| p.failure_threshold);
        assert_eq!(threshold.flatten(), startup, "{tag}");
        // kwok runs no probes, so the kubelet's rule is applied to the probes as applied: a
        // node waits at the gate as long as its version holds it (a fleet that takes ten
        // minutes to settle, from 0.5.0), and no probe may restart it meanwhile.
        let hold = gate_hold(tag);
        assert!(
            !restarted_while_gated(&container, hold),
            "{tag}: a node held {hold} s at the gate is restarted by {container:?}"
        );
        wait_condition(&env, name, "Ready", "True", None).await;
    }
    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
