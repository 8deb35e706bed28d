//! Changing a fleet's celld image follows celld's upgrade rules: v0.3 → v0.4 stops every old
//! node before a new one starts; v0.4.0 → v0.4.1 rolls one node at a time and waits while a node
//! reports restores; an image of unknown version takes the full stop; a downgrade below v0.4.1
//! once v0.4.1 ran is refused; any other change of the pod template waits while a node is down
//! and then rolls one node at a time; v0.6.1's CELLD_LTX_RETENTION_SECS reaches the nodes only once
//! every node runs v0.6.1, and going back to v0.6.0 waits until no node has it. The nodes' `/state` is served by the test (kwok pods have no
//! network) through the operator's connect-to address; the request is the production one.

use crate::pod_history::{PodHistory, Snapshot};
use crate::support::*;
use celld_api::labels;
use celld_fixtures::NodeDouble;
use celld_testkit::{TestEnv, wait_for_object};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

const V3: &str = "ghcr.io/denoland/celld:v0.3.0";
const V40: &str = "ghcr.io/denoland/celld:v0.4.0";
const V41: &str = "ghcr.io/denoland/celld:v0.4.1";
const LATEST: &str = "ghcr.io/denoland/celld:latest";
const V60: &str = "ghcr.io/denoland/celld:v0.6.0";
const V61: &str = "ghcr.io/denoland/celld:v0.6.1";
const RETENTION: &str = "CELLD_LTX_RETENTION_SECS";
/// The Worker version deployed, which the nodes serve.
const FIRST: &str = "00000000000000a1";

/// An operator whose node API requests go to `nodes`, and a fleet `web` on `image` with
/// `replicas` nodes that is Ready.
async fn ready_fleet(test: &str, image: &str, replicas: i32, nodes: &NodeDouble) -> TestEnv {
    let env = env_with_crds(test).await;
    let mut settings = settings(&env, "op-1");
    settings.node_api_connect_to = Some(nodes.address.clone());
    let op = start(operator_client(&env).await, settings);
    // The operator runs as long as the test: its task ends with the runtime.
    std::mem::forget(op);
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, test);
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, FIRST).await;
    set_image(&env, &s3, &prefix, image, replicas).await;
    wait_serving(&env, image, replicas).await;
    env
}

async fn set_image(
    env: &TestEnv,
    s3: &celld_testkit::S3Settings,
    prefix: &str,
    image: &str,
    replicas: i32,
) {
    apply_fleet(
        env,
        &inline_fleet(
            "web",
            s3,
            prefix,
            json!({"image": image, "replicas": replicas}),
        )
        .expect("a valid CelldFleet"),
    )
    .await;
}

/// Changes only the image of the fleet `web`.
async fn change_image(env: &TestEnv, image: &str) {
    let s3 = env.s3().expect("S3 settings");
    let fleet = env
        .api::<celld_api::CelldFleet>()
        .get("web")
        .await
        .expect("fleet read");
    let replicas = fleet.spec.replicas;
    let bucket = fleet.spec.object_storage.bucket.clone();
    let prefix = bucket
        .split_once(&format!("{}/", s3.bucket))
        .map(|(_, p)| p.to_string())
        .expect("the fleet's prefix");
    set_image(env, &s3, &prefix, image, replicas).await;
}

/// Waits until every node runs `image`, is Ready, and the fleet says Ready and Stable.
async fn wait_serving(env: &TestEnv, image: &str, replicas: i32) {
    wait_for_object(
        &env.api::<StatefulSet>(),
        "web",
        &format!("{replicas} nodes of {image}, all updated and ready"),
        Duration::from_secs(120),
        |sts| {
            let spec = sts.spec.as_ref();
            let status = sts.status.as_ref();
            let template_image = spec
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|p| p.containers.first())
                .and_then(|c| c.image.as_deref());
            template_image == Some(image)
                && spec.and_then(|s| s.replicas) == Some(replicas)
                && status.is_some_and(|s| {
                    s.observed_generation == sts.metadata.generation
                        && s.replicas == replicas
                        && s.ready_replicas == Some(replicas)
                        && s.updated_replicas == Some(replicas)
                })
        },
    )
    .await
    .expect("the nodes run the image");
    wait_condition(env, "web", "Progressing", "False", Some("Stable")).await;
    wait_condition(env, "web", "Ready", "True", Some("Serving")).await;
}

/// The images of the pods that exist (terminating ones included) in a snapshot.
fn images(snapshot: &Snapshot) -> BTreeSet<&str> {
    snapshot.values().map(|p| p.image.as_str()).collect()
}

/// Asserts no snapshot holds pods of `old` and `new` at once, and that both were seen.
fn assert_never_side_by_side(history: &PodHistory, old: &str, new: &str) {
    let snapshots = history.snapshots();
    for s in &snapshots {
        let images = images(s);
        assert!(
            !(images.contains(old) && images.contains(new)),
            "pods of {old} and {new} existed at once: {s:?}"
        );
    }
    assert!(snapshots.iter().any(|s| images(s).contains(old)));
    assert!(snapshots.iter().any(|s| images(s).contains(new)));
    assert!(
        snapshots.iter().any(|s| s.is_empty()),
        "the fleet went through zero pods"
    );
}

#[tokio::test]
async fn v0_3_to_v0_4_stops_every_old_node_before_a_new_one_starts() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-stop", V3, 2, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;

    change_image(&env, V40).await;
    wait_condition(&env, "web", "Progressing", "True", Some("FullStop")).await;
    wait_serving(&env, V40, 2).await;

    assert_never_side_by_side(&history, V3, V40);
    // celld: every old node's lease expires (10 s) before a new node starts.
    let empty = history
        .empty_between(V3, V40)
        .expect("old pods, none, then new");
    assert!(
        empty >= Duration::from_secs(10),
        "the new image started {empty:?} after the last old pod went"
    );
    let stop = wait_events(&env, "web", "Normal", "FullStop").await;
    assert!(
        stop.iter().any(|e| e.message.as_deref().is_some_and(
            |m| m.contains("celld before v0.4.0 and v0.4.0 or later must not run side by side")
        )),
        "a FullStop Event says why: {stop:?}"
    );
    wait_events(&env, "web", "Normal", "UpgradeFinished").await;
    assert!(
        !has_event(&env, "web", "WaitingForRestores", None).await,
        "a full stop waits for the pods to go, not for restores"
    );
}

#[tokio::test]
async fn v0_4_0_to_v0_4_1_rolls_one_node_at_a_time_and_waits_for_restores() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-roll", V40, 3, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;
    // web-0 keeps restoring cells: no node restarts, not even the first.
    nodes.set_restoring("web-0", 2);

    change_image(&env, V41).await;
    let waiting = wait_condition(
        &env,
        "web",
        "Progressing",
        "True",
        Some("WaitingForRestores"),
    )
    .await;
    let progressing = message(&waiting, "Progressing");
    assert!(
        progressing.contains("node web-0 reports 2 cells restoring"),
        "{progressing}"
    );
    // Several polls later the roll still waits: no node runs v0.4.1.
    tokio::time::sleep(Duration::from_secs(12)).await;
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet read");
    let partition = sts
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition);
    assert_eq!(partition, Some(3), "the roll waits before the last node");
    let now = history.snapshots().pop().expect("pods recorded");
    let on_new: Vec<&str> = now
        .iter()
        .filter(|(_, p)| p.image == V41)
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(on_new.is_empty(), "{now:?}");

    nodes.set_restoring("web-0", 0);
    wait_serving(&env, V41, 3).await;

    // One node at a time: never fewer than two serving nodes once the roll began, and the nodes
    // moved from the highest ordinal down.
    let snapshots = history.snapshots();
    let mut order: Vec<String> = Vec::new();
    for s in snapshots.iter().skip(1) {
        let serving = s.values().filter(|p| p.serving).count();
        assert!(serving >= 2, "more than one node was down at once: {s:?}");
        for (name, pod) in s {
            if pod.image == V41 && !order.contains(name) {
                order.push(name.clone());
            }
        }
    }
    assert_eq!(order, ["web-2", "web-1", "web-0"]);
    assert_eq!(
        nodes.asked(),
        BTreeSet::from(["web-0".to_string(), "web-1".into(), "web-2".into()]),
        "every node's state was read"
    );
    for reason in ["RollingUpgrade", "WaitingForRestores", "UpgradeFinished"] {
        wait_events(&env, "web", "Normal", reason).await;
    }
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet read");
    let annotations = sts.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations.get(labels::HIGHEST_VERSION).map(String::as_str),
        Some("0.4.1")
    );
    assert!(!annotations.contains_key(labels::ROLLING_FROM));
}

#[tokio::test]
async fn an_unknown_version_stops_the_fleet_and_a_forbidden_downgrade_is_refused() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-refuse", LATEST, 2, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;

    // latest → v0.4.1: the running version is unknown, so the safe path.
    change_image(&env, V41).await;
    wait_condition(&env, "web", "Progressing", "True", Some("FullStop")).await;
    wait_serving(&env, V41, 2).await;
    assert_never_side_by_side(&history, LATEST, V41);

    // v0.4.1 → v0.4.0 is refused; the nodes keep v0.4.1 and keep serving.
    change_image(&env, V40).await;
    let refused = wait_condition(&env, "web", "Degraded", "True", Some("UpgradeRefused")).await;
    let degraded = message(&refused, "Degraded");
    assert!(
        degraded.contains("spec.image ghcr.io/denoland/celld:v0.4.0 is refused")
            && degraded.contains("may not start again once v0.4.1"),
        "{degraded}"
    );
    assert_eq!(
        wait_events(&env, "web", "Warning", "UpgradeRefused")
            .await
            .len(),
        1,
        "one Warning Event"
    );
    assert_eq!(condition(&env, "web", "Ready").await.status, "True");
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet read");
    let image = sts
        .spec
        .and_then(|s| s.template.spec)
        .and_then(|p| p.containers.into_iter().next())
        .and_then(|c| c.image);
    assert_eq!(image.as_deref(), Some(V41));

    // Back to v0.4.1: the refusal heals.
    change_image(&env, V41).await;
    wait_condition(&env, "web", "Degraded", "False", Some("AsExpected")).await;
}

/// The value of `name` in the node template of StatefulSet `web`.
async fn template_env(env: &TestEnv, name: &str) -> Option<String> {
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet");
    sts.spec?.template.spec?.containers[0]
        .env
        .as_ref()?
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.value.clone())
}

/// Applies fleet `web` on `image` with 3 nodes and `env`.
async fn apply_web(env: &TestEnv, image: &str, vars: serde_json::Value) -> Result<(), kube::Error> {
    let s3 = env.s3().expect("S3 settings");
    let fleet = env
        .api::<celld_api::CelldFleet>()
        .get("web")
        .await
        .expect("fleet read");
    let bucket = fleet.spec.object_storage.bucket.clone();
    let prefix = bucket
        .split_once(&format!("{}/", s3.bucket))
        .map(|(_, p)| p.to_string())
        .expect("the fleet's prefix");
    let fleet = inline_fleet(
        "web",
        &s3,
        &prefix,
        json!({"image": image, "replicas": 3, "env": vars}),
    )
    .expect("a CelldFleet");
    env.api::<celld_api::CelldFleet>()
        .patch(
            "web",
            &kube::api::PatchParams::apply("kubectl-test").force(),
            &kube::api::Patch::Apply(&fleet),
        )
        .await
        .map(|_| ())
}

#[tokio::test]
async fn v0_6_1_settings_wait_for_every_node_and_going_back_waits_until_no_node_has_them() {
    let nodes = NodeDouble::start("0.6.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("upgrade-held", V60, 3, &nodes).await;

    // On v0.6.0 the setting is refused at admission.
    let refused = apply_web(&env, V60, json!([{"name": RETENTION, "value": "86400"}]))
        .await
        .expect_err("refused on v0.6.0");
    assert!(
        refused
            .to_string()
            .contains("CELLD_LTX_RETENTION_SECS is used from celld v0.6.1 on"),
        "{refused}"
    );

    // The image and the setting in one change: the nodes roll to v0.6.1 without it.
    apply_web(&env, V61, json!([{"name": RETENTION, "value": "86400"}]))
        .await
        .expect("admitted on v0.6.1");
    let held = wait_condition(&env, "web", "SettingsHeld", "True", Some("HeldForNodes")).await;
    let said = message(&held, "SettingsHeld");
    assert!(
        said.contains(
            "CELLD_LTX_RETENTION_SECS reaches the nodes once every node runs celld v0.6.1"
        ) && said.contains("not yet web-0"),
        "{said}"
    );
    assert_eq!(template_env(&env, RETENTION).await, None, "held back");
    assert_eq!(condition(&env, "web", "Reconciling").await.status, "True");

    // Every node runs v0.6.1: then it reaches them.
    wait_condition(&env, "web", "SettingsHeld", "False", Some("SettingsInUse")).await;
    assert_eq!(
        template_env(&env, RETENTION).await.as_deref(),
        Some("86400")
    );
    wait_serving(&env, V61, 3).await;

    // Back to v0.6.0, dropping the setting in the same change: the nodes first roll without it
    // on v0.6.1, and the image waits, saying why.
    apply_web(&env, V60, json!([])).await.expect("admitted");
    let waiting = wait_condition(
        &env,
        "web",
        "Progressing",
        "True",
        Some("WaitingForSettings"),
    )
    .await;
    let said = message(&waiting, "Progressing");
    assert!(
        said.contains("CELLD_LTX_RETENTION_SECS") && said.contains("every node"),
        "{said}"
    );
    assert_eq!(template_env(&env, RETENTION).await, None, "dropped first");
    wait_serving(&env, V60, 3).await;
    assert!(
        !has_event(&env, "web", "UpgradeRefused", None).await,
        "a rollback on its way is not a refusal"
    );
}

#[tokio::test]
async fn a_template_change_waits_while_a_node_is_down_then_rolls_one_node_at_a_time() {
    let nodes = NodeDouble::start("0.4.1", FIRST)
        .await
        .expect("the node double");
    let env = ready_fleet("template-roll", V41, 3, &nodes).await;
    let history = PodHistory::record(&env, &labels::node_selector_string("web")).await;
    let pods = env.api::<k8s_openapi::api::core::v1::Pod>();
    // web-1, a follower, is down: not Ready, its state unreadable.
    celld_testkit::hold_pod_waiting(&pods, "web-1", "CrashLoopBackOff", None)
        .await
        .expect("web-1 down");
    nodes.break_state("web-1", true);

    apply_web(&env, V41, json!([{"name": "RUST_LOG", "value": "debug"}]))
        .await
        .expect("a new template");
    wait_condition(&env, "web", "Progressing", "True", Some("RollingOut")).await;
    tokio::time::sleep(Duration::from_secs(12)).await;
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet");
    let partition = sts
        .spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.partition);
    assert_eq!(partition, Some(3), "no node restarts while web-1 is down");
    assert_eq!(
        sts.status
            .as_ref()
            .and_then(|s| s.updated_replicas)
            .unwrap_or(0),
        0,
        "no pod has the new template"
    );

    // web-1 is back: the nodes move one at a time, from the last.
    let back = json!({"metadata": {"annotations": {
        celld_testkit::WAITING_REASON_ANNOTATION: null,
        celld_testkit::WAITING_MESSAGE_ANNOTATION: null,
    }}});
    pods.patch(
        "web-1",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&back),
    )
    .await
    .expect("web-1 runs again");
    nodes.break_state("web-1", false);
    wait_for_object(
        &env.api::<StatefulSet>(),
        "web",
        "every node on the new template",
        Duration::from_secs(120),
        |sts| {
            sts.status.as_ref().is_some_and(|s| {
                s.updated_replicas == Some(3)
                    && s.ready_replicas == Some(3)
                    && s.current_revision == s.update_revision
            })
        },
    )
    .await
    .expect("the template rolled");
    assert_eq!(
        template_env(&env, "RUST_LOG").await.as_deref(),
        Some("debug")
    );
    let snapshots = history.snapshots();
    let restarted_at_once = snapshots
        .iter()
        .map(|s| s.values().filter(|p| !p.serving).count())
        .max();
    assert!(
        restarted_at_once <= Some(1),
        "at most one node down at a time once web-1 was back: {snapshots:?}"
    );

    // Removing a node waits while web-0 restores cells, then goes.
    nodes.set_restoring("web-0", 3);
    let fleets = env.api::<celld_api::CelldFleet>();
    fleets
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .expect("two nodes wanted");
    let waiting = wait_condition(
        &env,
        "web",
        "Progressing",
        "True",
        Some("WaitingForRestores"),
    )
    .await;
    assert!(
        message(&waiting, "Progressing").contains("removing nodes (3 to 2)"),
        "{}",
        message(&waiting, "Progressing")
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    let sts = env
        .api::<StatefulSet>()
        .get("web")
        .await
        .expect("StatefulSet");
    assert_eq!(
        sts.spec.and_then(|s| s.replicas),
        Some(3),
        "kept while web-0 restores"
    );
    nodes.set_restoring("web-0", 0);
    wait_for_object(
        &env.api::<StatefulSet>(),
        "web",
        "two nodes",
        Duration::from_secs(60),
        |sts| sts.spec.as_ref().and_then(|s| s.replicas) == Some(2),
    )
    .await
    .expect("the node is removed once none restores");
}
