//! spec.autoscaling on celld's own signals: the node double plays 0.6.1 nodes with scripted
//! capacity; the operator reads them every second. Pressure adds nodes (a step per period, up
//! to maxReplicas), sustained headroom removes them one at a time down to minReplicas; a node
//! that restores cells, a rollout that does not finish and a node whose state cannot be read
//! each hold the scale-in with the reason in status.autoscaling; `kubectl scale` does not fight
//! the autoscaler, which keeps the count and says who set spec.replicas.

use crate::support::*;
use celld_api::{AutoscalingStatus, CelldFleet};
use celld_fixtures::{Load, NodeDouble};
use celld_testkit::{Check, TestEnv, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};
use std::time::Duration;

const V1: &str = "00000000000000a1";

/// A namespace, the node double playing 0.6.1 nodes and an operator reading them every second.
async fn env_reading_every_second(test: &str) -> (TestEnv, NodeDouble, Operator) {
    env_reading_nodes(test, "0.6.1", V1, |_| {}).await
}

/// Creates the fleet `web` with `autoscaling`, 1 GiB of memory per node and `extra` spec
/// fields, its bucket holding a deployment.
async fn autoscaled_fleet(env: &TestEnv, replicas: i32, autoscaling: Value, extra: Value) {
    let mut spec = json!({
        "image": "ghcr.io/denoland/celld:v0.6.1",
        "replicas": replicas,
        "resources": {"limits": {"memory": "1Gi"}},
        "env": [{"name": "CELLD_IDLE_EVICT_S", "value": "300"}],
        "autoscaling": autoscaling,
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    deployed_fleet(env, "web", V1, spec).await;
}

/// Waits until `check` accepts the fleet's status.autoscaling; returns the fleet.
async fn wait_autoscaling(
    env: &TestEnv,
    what: &str,
    within: Duration,
    check: impl Fn(&AutoscalingStatus, &CelldFleet) -> bool,
) -> CelldFleet {
    let api = env.api::<CelldFleet>();
    wait_until(what.to_string(), within, || async {
        let Ok(Some(fleet)) = api.get_opt("web").await else {
            return Check::Pending("no fleet".into());
        };
        let status = fleet.status.clone().unwrap_or_default();
        match &status.autoscaling {
            Some(a) if check(a, &fleet) => Check::Done(fleet),
            other => Check::Pending(format!(
                "autoscaling {other:?}, capacity {:?}, conditions {:?}",
                status.capacity, status.conditions
            )),
        }
    })
    .await
    .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The StatefulSet's spec.replicas.
async fn sts_replicas(env: &TestEnv) -> i32 {
    env.api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet")
        .spec
        .and_then(|s| s.replicas)
        .unwrap_or_default()
}

fn holding(a: &AutoscalingStatus) -> &str {
    a.holding.as_ref().map_or("", |h| h.reason.as_str())
}

fn pressure() -> Load {
    Load {
        capacity_waiting: 5,
        ..Load::default()
    }
}

#[tokio::test]
async fn pressure_adds_nodes_and_headroom_removes_them_one_at_a_time() {
    let (env, nodes, op) = env_reading_every_second("autoscaling-up-down").await;
    let behavior = json!({
        "minReplicas": 2, "maxReplicas": 4,
        "scaleUp": {"stabilizationWindowSeconds": 2, "maxNodesPerStep": 1, "periodSeconds": 2},
        "scaleDown": {"stabilizationWindowSeconds": 3, "periodSeconds": 3},
    });
    nodes.set_load("web-1", pressure());
    autoscaled_fleet(&env, 2, behavior, json!({})).await;

    // Activations wait on web-1: one node per period, up to maxReplicas.
    let fleet = wait_autoscaling(&env, "scaled up to 4", TIMEOUT, |a, _| {
        a.desired_replicas == 4 && holding(a) == "AtMaximum"
    })
    .await;
    let status = fleet.status.clone().expect("status");
    let decision = status
        .autoscaling
        .as_ref()
        .and_then(|a| a.last_decision.clone())
        .expect("a decision");
    assert_eq!((decision.from, decision.to), (3, 4), "{decision:?}");
    assert_eq!(decision.reason, "CapacityWaiting");
    assert!(
        decision
            .message
            .contains("5 activations wait for capacity on 1 node (web-1 5)"),
        "{decision:?}"
    );
    let capacity = status.capacity.expect("status.capacity");
    assert!(
        capacity.total.capacity_waiting.unwrap_or(0) >= 5,
        "{capacity:?}"
    );
    wait_events(&env, "web", "Normal", "ScaledUp").await;
    assert_eq!(condition(&env, "web", "IdleEviction").await.status, "True");

    // Headroom everywhere: one node at a time down to minReplicas, never two at once.
    nodes.set_load("web-1", Load::default());
    let mut seen = vec![sts_replicas(&env).await];
    let api = env.api::<CelldFleet>();
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let replicas = sts_replicas(&env).await;
        if seen.last() != Some(&replicas) {
            seen.push(replicas);
        }
        let fleet = api.get("web").await.expect("fleet");
        let a = fleet.status.and_then(|s| s.autoscaling).unwrap_or_default();
        if a.desired_replicas == 2 && replicas == 2 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the fleet scales in to minReplicas: {a:?}, StatefulSet {replicas}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(seen, [4, 3, 2], "one node at a time");
    let fleet = api.get("web").await.expect("fleet");
    let a = fleet
        .status
        .and_then(|s| s.autoscaling)
        .expect("autoscaling");
    let last = a.last_decision.expect("a decision");
    assert_eq!(
        (last.from, last.to, last.reason.as_str()),
        (3, 2, "Headroom")
    );
    assert!(last.message.contains("survivors would use"), "{last:?}");
    wait_events(&env, "web", "Normal", "ScaledDown").await;
    let metrics = op.metrics.encode();
    for line in [
        r#"celld_operator_autoscaler_decisions_total{direction="up",reason="CapacityWaiting"} 2"#,
        r#"celld_operator_autoscaler_decisions_total{direction="down",reason="Headroom"} 2"#,
        r#"celld_operator_fleet_autoscaler_desired_replicas{namespace=""#,
    ] {
        assert!(metrics.contains(line), "{line} in:\n{metrics}");
    }

    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn restoring_unreadable_state_and_a_rollout_each_hold_the_scale_in() {
    let (env, nodes, op) = env_reading_every_second("autoscaling-holds").await;
    let behavior = json!({
        "minReplicas": 1, "maxReplicas": 3,
        "scaleDown": {"stabilizationWindowSeconds": 1, "periodSeconds": 1},
    });
    nodes.set_restoring("web-0", 4);
    autoscaled_fleet(&env, 3, behavior, json!({})).await;
    let held = Duration::from_secs(6);

    // A node restores: held, and the pause is exported.
    wait_autoscaling(&env, "held by a restore", TIMEOUT, |a, _| {
        holding(a) == "Restoring" && a.desired_replicas == 3
    })
    .await;
    tokio::time::sleep(held).await;
    assert_eq!(
        sts_replicas(&env).await,
        3,
        "no node removed while one restores"
    );
    let metrics = op.metrics.encode();
    assert!(
        metrics.contains(&format!(
            r#"celld_operator_fleet_scale_paused{{namespace="{}",fleet="web"}} 1"#,
            env.namespace()
        )),
        "{metrics}"
    );

    // A node's state cannot be read: held (fail closed), and the condition says so.
    nodes.set_restoring("web-0", 0);
    nodes.break_state("web-2", true);
    wait_autoscaling(&env, "held by an unreadable node", TIMEOUT, |a, _| {
        holding(a) == "StateUnreadable"
    })
    .await;
    assert_eq!(condition(&env, "web", "Autoscaling").await.status, "False");
    tokio::time::sleep(held).await;
    assert_eq!(
        sts_replicas(&env).await,
        3,
        "no node removed on an unreadable state"
    );

    // A rollout that cannot finish (the new pod template fits no node): held.
    nodes.break_state("web-2", false);
    env.api::<CelldFleet>()
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"nodeSelector": {"celld.dev/none": "x"}}})),
        )
        .await
        .expect("spec.nodeSelector changed");
    wait_autoscaling(&env, "held by a rollout", TIMEOUT, |a, _| {
        holding(a) == "RolloutInProgress"
    })
    .await;
    tokio::time::sleep(held).await;
    assert_eq!(
        sts_replicas(&env).await,
        3,
        "no node removed during a rollout"
    );

    // The rollout is undone: the fleet scales in.
    env.api::<CelldFleet>()
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"nodeSelector": null}})),
        )
        .await
        .expect("spec.nodeSelector removed");
    wait_autoscaling(&env, "scaled in once nothing holds", TIMEOUT, |a, _| {
        a.desired_replicas < 3
    })
    .await;

    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn kubectl_scale_does_not_fight_the_autoscaler_and_is_reported() {
    let (env, nodes, op) = env_reading_every_second("autoscaling-contested").await;
    // A quiet fleet at its minimum: nothing to scale.
    let behavior = json!({"minReplicas": 2, "maxReplicas": 4});
    nodes.set_load("web-0", Load::default());
    autoscaled_fleet(&env, 2, behavior, json!({})).await;
    wait_autoscaling(&env, "steady", TIMEOUT, |a, _| {
        a.desired_replicas == 2 && a.current_replicas == 2
    })
    .await;

    env.kubectl()
        .run(["scale", "celldfleet/web", "--replicas=4"])
        .await
        .expect("kubectl scale");
    let fleet = wait_autoscaling(&env, "the contest reported", TIMEOUT, |_, f| {
        f.status.as_ref().is_some_and(|s| {
            celld_api::conditions::find(&s.conditions, "Autoscaling")
                .is_some_and(|c| c.reason == "ReplicasContested")
        })
    })
    .await;
    let says = message(&fleet, "Autoscaling");
    assert!(
        says.contains("spec.replicas is 4, set through the scale subresource by kubectl"),
        "{says}"
    );
    assert!(says.contains("owns the number of nodes (2)"), "{says}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        sts_replicas(&env).await,
        2,
        "the autoscaler keeps its count"
    );
    wait_events(&env, "web", "Warning", "ReplicasContested").await;

    op.stop().await;
    env.cleanup().await.expect("cleanup");
}

#[tokio::test]
async fn every_fleet_reports_capacity_and_an_older_celld_says_what_it_lacks() {
    let (env, _nodes, op) = env_reading_nodes("autoscaling-old-celld", "0.4.1", V1, |_| {}).await;
    autoscaled_fleet(
        &env,
        2,
        json!({"minReplicas": 1, "maxReplicas": 3}),
        json!({"image": "ghcr.io/denoland/celld:v0.4.1"}),
    )
    .await;

    // celld 0.4 reports restoring, residents and rss only: named, never read as 0, and the
    // autoscaler holds with the condition saying why.
    let fleet = wait_autoscaling(&env, "signals unsupported", TIMEOUT, |a, _| {
        holding(a) == "SignalsUnsupported"
    })
    .await;
    let status = fleet.status.clone().expect("status");
    let capacity = status.capacity.expect("status.capacity");
    assert_eq!(capacity.total.nodes_read, 2, "{capacity:?}");
    assert_eq!(capacity.total.capacity_waiting, None, "{capacity:?}");
    assert_eq!(capacity.total.rss_bytes, Some(2_000_000), "{capacity:?}");
    assert!(
        capacity
            .unreported
            .contains(&"capacity_waiting".to_string())
            && capacity
                .unreported
                .contains(&"node_load.memory_headroom".to_string()),
        "{capacity:?}"
    );
    let autoscaling = condition(&env, "web", "Autoscaling").await;
    assert_eq!(
        (autoscaling.status.as_str(), autoscaling.reason.as_str()),
        ("False", "SignalsUnsupported")
    );
    assert!(
        autoscaling.message.contains("celld before v0.5.0"),
        "{autoscaling:?}"
    );
    let metrics = op.metrics.encode();
    let series = format!(r#"{{namespace="{}",fleet="web"}}"#, env.namespace());
    assert!(
        metrics.contains(&format!("celld_operator_fleet_rss_bytes{series} 2000000")),
        "{metrics}"
    );
    assert!(
        !metrics.contains(&format!("celld_operator_fleet_capacity_waiting{series}")),
        "a field 0.4 does not report has no series: {metrics}"
    );
    assert!(
        metrics.contains(r#"celld_operator_node_state_reads_total{reader="capacity",result="ok"}"#)
    );

    op.stop().await;
    env.cleanup().await.expect("cleanup");
}
