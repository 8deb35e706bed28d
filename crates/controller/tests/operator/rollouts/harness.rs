//! What the rollout tests share: fleets `a`, `b`, ... each on a bucket prefix of its own
//! serving [`V1`], labelled `tier: web`, the node double, and the test's part as the kubelet of
//! the deploy pods.

use crate::source::attempt_pod_of;
use crate::support::*;
use celld_api::CelldFleet;
use celld_api::contract::DeployPointer;
use celld_api::rollout::{CelldRollout, FleetPhase, RolloutFleet, RolloutPhase, WavePhase};
use celld_fixtures::NodeDouble;
use celld_testkit::{Check, Completion, S3Settings, TestEnv, complete_pod, wait_until};
use kube::api::{Patch, PatchParams};
use serde_json::json;
use std::collections::BTreeMap;

/// What every fleet serves before the rollout.
pub(super) const V1: &str = "00000000000000d1";
/// The version the rollout's revision becomes in each bucket.
pub(super) const V2: &str = "00000000000000d2";
/// The revision shipped.
pub(super) const REF: &str = "registry.invalid/acme/web-worker:2@sha256:2222222222222222222222222222222222222222222222222222222222222222";

/// A namespace with fleets serving [`V1`], the node double and an operator.
pub(super) struct Ring {
    pub(super) env: TestEnv,
    pub(super) s3: S3Settings,
    pub(super) nodes: NodeDouble,
    pub(super) op: Option<Operator>,
    /// Each fleet's bucket prefix.
    pub(super) prefixes: BTreeMap<String, String>,
}

/// A fleet's inline spec: one node, the test's S3 server under `prefix`.
fn fleet(name: &str, s3: &S3Settings, prefix: &str) -> CelldFleet {
    let mut fleet = celld_fixtures::inline_fleet(
        name,
        s3,
        prefix,
        json!({"image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 1}),
    )
    .expect("a CelldFleet");
    fleet.metadata.labels = Some([("tier".to_string(), "web".to_string())].into());
    fleet
}

/// A namespace for `test` with the fleets `names`, each Ready on [`V1`].
pub(super) async fn ring(test: &str, names: &[&str]) -> Ring {
    let env = env_with_crds(test).await;
    crate::source::restricted(&env).await;
    let nodes = NodeDouble::start_per_pod("0.6.0", |_| V1.to_string())
        .await
        .expect("the node double");
    let s3 = env.s3().expect("S3 settings");
    celld_fixtures::create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let mut prefixes = BTreeMap::new();
    for name in names {
        let prefix = prefix(&s3, &format!("{test}-{name}"));
        publish_pointer(&s3, &prefix, V1).await;
        apply_fleet(&env, &fleet(name, &s3, &prefix)).await;
        prefixes.insert((*name).to_string(), prefix);
    }
    let op = operator(&env, &nodes, "op-1").await;
    for name in names {
        wait_condition(&env, name, "Ready", "True", None).await;
    }
    Ring {
        env,
        s3,
        nodes,
        op: Some(op),
        prefixes,
    }
}

/// An operator `identity` reaching the nodes through `nodes`.
pub(super) async fn operator(env: &TestEnv, nodes: &NodeDouble, identity: &str) -> Operator {
    let mut settings = settings(env, identity);
    settings.node_api_connect_to = Some(nodes.address.clone());
    start(operator_client(env).await, settings)
}

/// Applies the rollout `name` shipping [`REF`] to the `tier: web` fleets, with `spec` (its
/// waves and the rest) and `annotations`.
pub(super) async fn apply_rollout(
    env: &TestEnv,
    name: &str,
    spec: serde_json::Value,
    annotations: serde_json::Value,
) {
    let mut full = json!({
        "source": {"image": {"reference": REF}},
        "selector": {"matchLabels": {"tier": "web"}},
    });
    celld_fixtures::merge(&mut full, spec);
    env.api::<CelldRollout>()
        .patch(
            name,
            &PatchParams::apply("tests").force(),
            &Patch::Apply(json!({
                "apiVersion": "platform.celld.dev/v1alpha1",
                "kind": "CelldRollout",
                "metadata": {"name": name, "annotations": annotations},
                "spec": full,
            })),
        )
        .await
        .expect("the rollout applied");
}

/// Sets (or with None removes) the annotation `key` of the rollout `name`.
pub(super) async fn annotate(env: &TestEnv, name: &str, key: &str, value: Option<&str>) {
    env.api::<CelldRollout>()
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {key: value}}})),
        )
        .await
        .expect("the rollout annotated");
}

/// Waits until the rollout `name`'s status satisfies `done` (saying `what`), and returns it.
pub(super) async fn wait_rollout(
    env: &TestEnv,
    name: &str,
    what: &str,
    done: impl Fn(&CelldRollout) -> bool,
) -> CelldRollout {
    let api = env.api::<CelldRollout>();
    wait_until(format!("rollout {name}: {what}"), TIMEOUT, || async {
        match api.get(name).await {
            Ok(r) if done(&r) => Check::Done(r),
            Ok(r) => Check::Pending(serde_json::to_string(&r.status).unwrap_or_default()),
            Err(e) => Check::Pending(e.to_string()),
        }
    })
    .await
    .expect("the rollout gets there")
}

/// Waits until every one of `fleets` publishes the revision of the rollout `web`.
pub(super) async fn wait_publishing(env: &TestEnv, fleets: &[&str]) -> CelldRollout {
    let what = format!("{} publishing", fleets.join(" and "));
    wait_rollout(env, "web", &what, |r| {
        fleets
            .iter()
            .all(|f| fleet_phase(r, f) == Some(FleetPhase::Publishing))
    })
    .await
}

/// Waits until wave `number` of the rollout `web` is in `phase`.
pub(super) async fn wait_wave(env: &TestEnv, number: i32, phase: WavePhase) -> CelldRollout {
    let what = format!("wave {number} {}", phase.as_str());
    wait_rollout(env, "web", &what, |r| {
        r.status.as_ref().is_some_and(|s| {
            s.waves
                .iter()
                .any(|w| w.number == number && w.phase == phase)
        })
    })
    .await
}

/// The rollout's entry of the fleet `fleet`.
pub(super) fn entry<'a>(r: &'a CelldRollout, fleet: &str) -> Option<&'a RolloutFleet> {
    r.status
        .iter()
        .flat_map(|s| &s.waves)
        .flat_map(|w| &w.fleets)
        .find(|f| f.name == fleet)
}

/// The phase of the rollout's fleet `fleet`.
pub(super) fn fleet_phase(r: &CelldRollout, fleet: &str) -> Option<FleetPhase> {
    entry(r, fleet).map(|f| f.phase)
}

/// The rollout's phase.
pub(super) fn phase(r: &CelldRollout) -> Option<RolloutPhase> {
    r.status.as_ref().map(|s| s.phase)
}

/// The fleets of wave `number`, by name.
pub(super) fn wave_fleets(r: &CelldRollout, number: i32) -> Vec<String> {
    r.status
        .iter()
        .flat_map(|s| &s.waves)
        .filter(|w| w.number == number)
        .flat_map(|w| &w.fleets)
        .map(|f| f.name.clone())
        .collect()
}

/// Plays `celld deploy` succeeding for the fleet `fleet`'s deploy pod: its pointer names
/// `version`, its nodes take it, the pod ends with the script's result.
pub(super) async fn play_publish(t: &Ring, fleet: &str, version: &str) {
    let (_, pod) = attempt_pod_of(&t.env, fleet, 1).await;
    publish_pointer(&t.s3, &t.prefixes[fleet], version).await;
    t.nodes.publish_to(fleet, version);
    complete_pod(
        &t.env.api(),
        &pod,
        &Completion::succeeded().with_termination_message(r#"{"outcome":"Published"}"#),
    )
    .await
    .expect("the deploy pod completed");
}

/// The version the fleet `fleet`'s bucket pointer names.
pub(super) async fn pointer(t: &Ring, fleet: &str) -> String {
    let key = format!("{}/deploy/current.json", t.prefixes[fleet]);
    let body =
        t.s3.get_object(&key)
            .await
            .expect("the pointer read")
            .expect("a pointer");
    DeployPointer::parse(&body).expect("a pointer").version
}

/// The deploy Jobs of the fleet `fleet`.
pub(super) async fn jobs_of(env: &TestEnv, fleet: &str) -> Vec<String> {
    use k8s_openapi::api::batch::v1::Job;
    let selector = format!(
        "{}={fleet},{}=deploy",
        celld_api::labels::FLEET,
        celld_api::labels::ROLE
    );
    env.api::<Job>()
        .list(&kube::api::ListParams::default().labels(&selector))
        .await
        .expect("Jobs listed")
        .items
        .into_iter()
        .filter(|j| j.metadata.deletion_timestamp.is_none())
        .filter_map(|j| j.metadata.name)
        .collect()
}
