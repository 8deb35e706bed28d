//! What the spec.source tests share: a fleet `web` with a spec.source, the node double, and
//! the test's part as the kubelet of the deploy pods.

use crate::support::*;
use celld_api::{CelldFleet, PublishPhase, labels};
use celld_testkit::{Check, Completion, TestEnv, complete_pod, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::json;

pub(crate) const V1: &str = "00000000000000d1";
pub(super) const V2: &str = "00000000000000d2";
pub(super) const OTHER: &str = "00000000000000e9";
pub(super) const REF1: &str = "registry.invalid/acme/web-worker:1@sha256:1111111111111111111111111111111111111111111111111111111111111111";
pub(super) const TAG2: &str = "registry.invalid/acme/web-worker:2";
pub(super) const DIGEST2: &str =
    "sha256:2222222222222222222222222222222222222222222222222222222222222222";
pub(super) const REF2: &str = "registry.invalid/acme/web-worker:2@sha256:2222222222222222222222222222222222222222222222222222222222222222";

/// A test with a fleet `web` whose spec.source is `source`.
pub(super) struct Sourced {
    pub(super) env: TestEnv,
    pub(super) s3: celld_testkit::S3Settings,
    pub(super) prefix: String,
    pub(super) nodes: celld_fixtures::NodeDouble,
    pub(super) op: Option<Operator>,
}

pub(super) async fn sourced(test: &str, source: serde_json::Value) -> Sourced {
    sourced_with(test, json!({"source": source})).await
}

/// A test with a fleet `web` whose spec has `extra` (with its spec.source).
pub(super) async fn sourced_with(test: &str, extra: serde_json::Value) -> Sourced {
    let (env, nodes, op) = env_with_nodes(test, "0.6.0", V1).await;
    restricted(&env).await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, test);
    celld_fixtures::create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let mut spec = json!({"image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 2});
    celld_fixtures::merge(&mut spec, extra);
    apply_fleet(
        &env,
        &celld_fixtures::inline_fleet("web", &s3, &prefix, spec).expect("a CelldFleet"),
    )
    .await;
    Sourced {
        env,
        s3,
        prefix,
        nodes,
        op: Some(op),
    }
}

/// Makes the test namespace enforce the restricted Pod Security Standard: a deploy pod that
/// breaks it is never created.
pub(crate) async fn restricted(env: &TestEnv) {
    kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(env.client())
        .patch(
            env.namespace(),
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/enforce-version": "latest",
            }}})),
        )
        .await
        .expect("the namespace enforces restricted");
}

/// The deploy Jobs of the test namespace, by name.
pub(super) async fn jobs(env: &TestEnv) -> Vec<String> {
    let mut names: Vec<String> = env
        .api::<Job>()
        .list(&ListParams::default().labels(&format!("{}=deploy", labels::ROLE)))
        .await
        .expect("Jobs listed")
        .items
        .into_iter()
        .filter(|j| j.metadata.deletion_timestamp.is_none())
        .filter_map(|j| j.metadata.name)
        .collect();
    names.sort();
    names
}

/// Waits for the Job the fleet's status names as its last attempt `attempt`, and its pod.
/// Returns both names.
pub(crate) async fn attempt_pod(env: &TestEnv, attempt: i32) -> (String, String) {
    attempt_pod_of(env, "web", attempt).await
}

/// [`attempt_pod`] of the fleet `name`.
pub(crate) async fn attempt_pod_of(env: &TestEnv, name: &str, attempt: i32) -> (String, String) {
    let fleets = env.api::<CelldFleet>();
    let pods = env.api::<Pod>();
    wait_until(
        format!("the deploy Job of attempt {attempt} and its pod"),
        TIMEOUT,
        || async {
            let Ok(fleet) = fleets.get(name).await else {
                return Check::Pending("no fleet".into());
            };
            let Some(last) = fleet
                .status
                .and_then(|s| s.source)
                .and_then(|s| s.last_attempted)
                .filter(|a| a.attempt == attempt && a.phase == PublishPhase::Running)
            else {
                return Check::Pending("no such attempt in status.source".into());
            };
            let selector = format!("batch.kubernetes.io/job-name={}", last.job);
            match pods.list(&ListParams::default().labels(&selector)).await {
                Ok(list) => match list.items.first().and_then(|p| p.metadata.name.clone()) {
                    Some(pod) if running(list.items.first()) => Check::Done((last.job, pod)),
                    _ => Check::Pending(format!("no running pod of Job {}", last.job)),
                },
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await
    .expect("a deploy Job runs")
}

pub(crate) fn running(pod: Option<&Pod>) -> bool {
    pod.and_then(|p| p.status.as_ref())
        .and_then(|s| s.phase.as_deref())
        == Some("Running")
}

/// Plays `celld deploy` succeeding in the pod: the pointer names `version`, the pod ends with
/// the script's result.
pub(super) async fn publish_in(t: &Sourced, pod: &str, version: &str) {
    publish_pointer(&t.s3, &t.prefix, version).await;
    complete_pod(
        &t.env.api(),
        pod,
        &Completion::succeeded().with_termination_message(r#"{"outcome":"Published"}"#),
    )
    .await
    .expect("the deploy pod completed");
}

pub(super) async fn replicas(env: &TestEnv) -> i32 {
    env.api::<StatefulSet>()
        .get("web")
        .await
        .ok()
        .and_then(|s| s.spec)
        .and_then(|s| s.replicas)
        .unwrap_or(-1)
}
