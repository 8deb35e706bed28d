//! spec.source: the operator publishes the revision a fleet declares with a deploy Job (the
//! test plays the kubelet for its pod: it writes the pointer `celld deploy` would, then ends the
//! pod with the script's result in its termination message), retries a failed publish with
//! backoff and stalls after spec.source.retries, corrects or reports drift, and publishes
//! nothing while suspended.

use crate::support::*;
use celld_api::contract::publish;
use celld_api::{CelldFleet, PublishPhase, labels};
use celld_testkit::{Check, Completion, TestEnv, complete_pod, hold_pod_waiting, wait_until};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::json;
use std::time::Duration;

pub const V1: &str = "00000000000000d1";
const V2: &str = "00000000000000d2";
const OTHER: &str = "00000000000000e9";
const REF1: &str = "registry.invalid/acme/web-worker:1@sha256:1111111111111111111111111111111111111111111111111111111111111111";
const TAG2: &str = "registry.invalid/acme/web-worker:2";
const DIGEST2: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
const REF2: &str = "registry.invalid/acme/web-worker:2@sha256:2222222222222222222222222222222222222222222222222222222222222222";

/// A test with a fleet `web` whose spec.source is `source`.
struct Sourced {
    env: TestEnv,
    s3: celld_testkit::S3Settings,
    prefix: String,
    nodes: celld_fixtures::NodeDouble,
    op: Option<Operator>,
}

async fn sourced(test: &str, source: serde_json::Value) -> Sourced {
    sourced_with(test, json!({"source": source})).await
}

/// A test with a fleet `web` whose spec has `extra` (with its spec.source).
async fn sourced_with(test: &str, extra: serde_json::Value) -> Sourced {
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
pub async fn restricted(env: &TestEnv) {
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
async fn jobs(env: &TestEnv) -> Vec<String> {
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
pub async fn attempt_pod(env: &TestEnv, attempt: i32) -> (String, String) {
    attempt_pod_of(env, "web", attempt).await
}

/// [`attempt_pod`] of the fleet `name`.
pub async fn attempt_pod_of(env: &TestEnv, name: &str, attempt: i32) -> (String, String) {
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

pub fn running(pod: Option<&Pod>) -> bool {
    pod.and_then(|p| p.status.as_ref())
        .and_then(|s| s.phase.as_deref())
        == Some("Running")
}

/// Plays `celld deploy` succeeding in the pod: the pointer names `version`, the pod ends with
/// the script's result.
async fn publish_in(t: &Sourced, pod: &str, version: &str) {
    publish_pointer(&t.s3, &t.prefix, version).await;
    complete_pod(
        &t.env.api(),
        pod,
        &Completion::succeeded().with_termination_message(r#"{"outcome":"Published"}"#),
    )
    .await
    .expect("the deploy pod completed");
}

async fn replicas(env: &TestEnv) -> i32 {
    env.api::<StatefulSet>()
        .get("web")
        .await
        .ok()
        .and_then(|s| s.spec)
        .and_then(|s| s.replicas)
        .unwrap_or(-1)
}

#[tokio::test]
async fn a_declared_image_is_published_once_then_each_new_revision() {
    let mut t = sourced("source-publish", json!({"image": {"reference": REF1}})).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Publishing")).await;
    assert!(message(&fleet, "SourceSynced").contains(REF1));
    let reconciling = condition(&t.env, "web", "Reconciling").await;
    assert_eq!(reconciling.status, "True", "{reconciling:?}");
    assert_eq!(condition(&t.env, "web", "Stalled").await.status, "False");
    assert_eq!(
        replicas(&t.env).await,
        0,
        "no node before the first publish"
    );

    let (job, pod) = attempt_pod(&t.env, 1).await;
    // An operator restart while the Job runs starts no second one.
    if let Some(op) = t.op.take() {
        op.stop().await;
    }
    let mut again = settings(&t.env, "op-2");
    again.node_api_connect_to = Some(t.nodes.address.clone());
    let op = start(operator_client(&t.env).await, again);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        jobs(&t.env).await,
        vec![job.clone()],
        "one Job across the restart"
    );
    let created = t.env.api::<Job>().get(&job).await.expect("the Job");
    let spec = created.spec.clone().expect("spec");
    assert_eq!(spec.active_deadline_seconds, Some(600));
    let pod_spec = spec.template.spec.expect("pod spec");
    assert_eq!(pod_spec.automount_service_account_token, Some(false));
    let command = pod_spec.containers[0].command.clone().expect("command");
    assert_eq!(command[..2], ["sh", "-c"]);
    assert_eq!(command[3], publish::SCRIPT_NAME);
    assert_eq!(command[4..7], ["celld", "deploy", "/src"]);

    publish_in(&t, &pod, V1).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;
    let source = fleet
        .status
        .clone()
        .and_then(|s| s.source)
        .expect("status.source");
    let published = source.last_published.expect("lastPublished");
    assert_eq!(published.revision, REF1);
    assert_eq!(published.version.as_deref(), Some(V1));
    assert_eq!(
        published.digest.as_deref(),
        REF1.split_once('@').map(|(_, d)| d)
    );
    wait_until("2 nodes once published", TIMEOUT, || async {
        match replicas(&t.env).await {
            2 => Check::Done(()),
            n => Check::Pending(format!("{n} replicas")),
        }
    })
    .await
    .expect("the nodes start");

    wait_condition(&t.env, "web", "Ready", "True", Some("Serving")).await;
    assert_eq!(
        jobs(&t.env).await,
        vec![job.clone()],
        "one Job, kept for its logs"
    );

    // At rest, a fleet with a source writes nothing.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (writes, reconciles) = (op.metrics.total_writes(), op.metrics.ok_reconciles());
    wait_until("3 more reconciles at rest", TIMEOUT, || async {
        let n = op.metrics.ok_reconciles();
        if n >= reconciles + 3 {
            Check::Done(())
        } else {
            Check::Pending(format!("{n} reconciles"))
        }
    })
    .await
    .expect("periodic reconciles");
    assert_eq!(
        op.metrics.total_writes(),
        writes,
        "no write at rest:\n{}",
        op.metrics.encode()
    );

    // A new revision: a new Job; once published, the old Job goes and the history keeps it.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"image": {"reference": REF2}}}})),
        )
        .await
        .expect("revision changed");
    let (job2, pod2) = attempt_pod(&t.env, 1).await;
    assert_ne!(job2, job);
    publish_in(&t, &pod2, V2).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;
    let source = fleet.status.and_then(|s| s.source).expect("status.source");
    assert_eq!(
        source.last_published.and_then(|p| p.version).as_deref(),
        Some(V2)
    );
    assert_eq!(source.history[0].version.as_deref(), Some(V1));
    wait_until("the superseded Job deleted", TIMEOUT, || async {
        let now = jobs(&t.env).await;
        if now == vec![job2.clone()] {
            Check::Done(())
        } else {
            Check::Pending(format!("{now:?}"))
        }
    })
    .await
    .expect("only the last Job stays");
    op.stop().await;
}

#[tokio::test]
async fn a_failing_publish_is_retried_with_backoff_then_stalls() {
    let (env, nodes, op) = env_with_nodes("source-retries", "0.6.0", V1).await;
    op.stop().await;
    let mut fast = settings(&env, "op-2");
    fast.node_api_connect_to = Some(nodes.address.clone());
    fast.publish_backoff = Duration::from_secs(1);
    let op = start(operator_client(&env).await, fast);
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "source-retries");
    celld_fixtures::create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    let extra = json!({"image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 1,
        "source": {"image": {"reference": REF1, "layout": "Deployer"}, "retries": 2}});
    apply_fleet(
        &env,
        &celld_fixtures::inline_fleet("web", &s3, &prefix, extra).expect("a CelldFleet"),
    )
    .await;
    let failed = Completion::failed().with_termination_message(
        r#"{"outcome":"Failed","step":"deploy","exitCode":1,"message":"wrangler.jsonc: unknown key \"build\""}"#,
    );
    let (_, pod) = attempt_pod(&env, 1).await;
    // The pod's waiting reason reaches the condition at once.
    hold_pod_waiting(
        &env.api(),
        &pod,
        "ErrImagePull",
        Some("registry.invalid: no such host"),
    )
    .await
    .expect("the pod waits");
    let fleet = wait_until("the waiting reason in SourceSynced", TIMEOUT, || async {
        let c = condition(&env, "web", "SourceSynced").await;
        if c.message.contains("ErrImagePull") {
            Check::Done(c)
        } else {
            Check::Pending(c.message)
        }
    })
    .await
    .expect("the waiting reason shown");
    assert_eq!(fleet.reason, "Publishing");
    env.api::<Pod>()
        .patch(
            &pod,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"testenv.celld.dev/waiting-reason": null}}}),
            ),
        )
        .await
        .expect("the pod runs again");
    wait_until("the pod running again", TIMEOUT, || async {
        match env.api::<Pod>().get(&pod).await {
            Ok(p) if running(Some(&p)) => Check::Done(()),
            other => Check::Pending(format!("{:?}", other.map(|p| p.status))),
        }
    })
    .await
    .expect("running");
    complete_pod(&env.api(), &pod, &failed)
        .await
        .expect("the first attempt fails");
    let (_, pod2) = attempt_pod(&env, 2).await;
    complete_pod(&env.api(), &pod2, &failed)
        .await
        .expect("the second attempt fails");
    let fleet = wait_condition(&env, "web", "Stalled", "True", Some("PublishFailed")).await;
    let synced = message(&fleet, "SourceSynced");
    assert!(synced.contains("failed 2 times"), "{synced}");
    assert!(
        synced.contains("unknown key"),
        "the script's own words: {synced}"
    );
    assert!(has_event(&env, "web", "PublishFailed", Some("Warning")).await);
    assert_eq!(replicas(&env).await, 0, "nothing was ever published");

    // A new revision starts over (a tag this time: the digest comes from the pulled image).
    env.api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"image": {"reference": TAG2}}}})),
        )
        .await
        .expect("a new revision");
    let (_, pod_next) = attempt_pod(&env, 1).await;
    complete_pod(&env.api(), &pod_next, &failed)
        .await
        .expect("the new revision's first attempt fails");
    attempt_pod(&env, 2).await;

    // Asking again starts over too.
    env.api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {labels::RECONCILE_REQUESTED_AT: "2026-12-02T12:00:00Z"}}})),
        )
        .await
        .expect("annotated");
    let (_, pod3) = attempt_pod(&env, 1).await;
    publish_pointer(&s3, &prefix, V1).await;
    complete_pod(
        &env.api(),
        &pod3,
        &Completion::succeeded()
            .with_termination_message(r#"{"outcome":"Published"}"#)
            .with_image_id(format!("registry.invalid/acme/web-worker@{DIGEST2}")),
    )
    .await
    .expect("published");
    let fleet = wait_condition(&env, "web", "SourceSynced", "True", Some("Synced")).await;
    let published = fleet
        .status
        .and_then(|s| s.source)
        .and_then(|s| s.last_published)
        .expect("lastPublished");
    assert_eq!(
        (published.revision.as_str(), published.digest.as_deref()),
        (TAG2, Some(DIGEST2)),
        "the tag and the digest the kubelet pulled"
    );
    op.stop().await;
}

#[tokio::test]
async fn drift_is_corrected_or_reported_and_a_suspended_source_publishes_nothing() {
    let mut t = sourced("source-drift", json!({"image": {"reference": REF1}})).await;
    let (_, pod) = attempt_pod(&t.env, 1).await;
    publish_in(&t, &pod, V1).await;
    wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;

    // Someone deploys by hand: the operator says so and publishes the source again.
    publish_pointer(&t.s3, &t.prefix, OTHER).await;
    let (_, pod2) = attempt_pod(&t.env, 2).await;
    let warnings = events(&t.env, "web", "Warning", "Drifted").await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let note = warnings[0].message.clone().unwrap_or_default();
    assert!(note.contains(OTHER) && note.contains(V1), "{note}");
    publish_in(&t, &pod2, V1).await;
    wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;

    // A writer that keeps deploying: two more corrections, then the fleet stalls.
    for attempt in [3, 4] {
        publish_pointer(&t.s3, &t.prefix, OTHER).await;
        let (_, pod) = attempt_pod(&t.env, attempt).await;
        publish_in(&t, &pod, V1).await;
        wait_condition(&t.env, "web", "SourceSynced", "True", Some("Synced")).await;
    }
    publish_pointer(&t.s3, &t.prefix, OTHER).await;
    let fleet = wait_condition(&t.env, "web", "Stalled", "True", Some("ConcurrentWriter")).await;
    assert!(
        message(&fleet, "Stalled").contains("another writer keeps deploying"),
        "{}",
        message(&fleet, "Stalled")
    );
    assert!(has_event(&t.env, "web", "ConcurrentWriter", Some("Warning")).await);

    // Under Report it stays, reported.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"driftPolicy": "Report"}}})),
        )
        .await
        .expect("Report");
    publish_pointer(&t.s3, &t.prefix, OTHER).await;
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Drifted")).await;
    let last = fleet
        .status
        .and_then(|s| s.source)
        .and_then(|s| s.last_attempted)
        .expect("lastAttempted");
    assert_eq!(last.attempt, 4, "no correction under Report");

    // Suspended in git: nothing is published.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"suspend": true}}})),
        )
        .await
        .expect("suspended by spec");
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Suspended")).await;
    assert!(message(&fleet, "SourceSynced").contains("spec.source.suspend is true"));
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"source": {"suspend": false}}})),
        )
        .await
        .expect("resumed");
    wait_condition(&t.env, "web", "SourceSynced", "False", Some("Drifted")).await;

    // Suspended (by the annotation git never sets): nothing is published, even a new revision.
    t.env
        .api::<CelldFleet>()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"annotations": {labels::SOURCE_SUSPENDED: "hotfix under way"}},
                "spec": {"source": {"image": {"reference": REF2}}},
            })),
        )
        .await
        .expect("suspended");
    let fleet = wait_condition(&t.env, "web", "SourceSynced", "False", Some("Suspended")).await;
    assert!(message(&fleet, "SourceSynced").contains("hotfix under way"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(jobs(&t.env).await.len(), 1, "no Job while suspended");

    // The fleet deleted, the garbage collector deletes its Job.
    t.env
        .api::<CelldFleet>()
        .delete("web", &Default::default())
        .await
        .expect("fleet deleted");
    wait_until("the fleet's Jobs collected", TIMEOUT, || async {
        let left = jobs(&t.env).await;
        if left.is_empty() {
            Check::Done(())
        } else {
            Check::Pending(format!("{left:?}"))
        }
    })
    .await
    .expect("the Jobs go with the fleet");
    if let Some(op) = t.op.take() {
        op.stop().await;
    }
}

#[tokio::test]
async fn a_deploy_pod_no_node_takes_says_so_then_fails_at_its_deadline() {
    let t = sourced_with(
        "source-unschedulable",
        json!({"nodeSelector": {"celld.test/never": "scheduled"},
            "source": {"image": {"reference": REF1}, "timeout": "30s", "retries": 1}}),
    )
    .await;
    let fleets = t.env.api::<CelldFleet>();
    wait_until("the unschedulable pod in SourceSynced", TIMEOUT, || async {
        let Ok(fleet) = fleets.get("web").await else {
            return Check::Pending("no fleet".into());
        };
        let c = celld_api::conditions::find(
            &fleet.status.clone().unwrap_or_default().conditions,
            "SourceSynced",
        )
        .cloned();
        match c {
            Some(c) if c.message.contains("Unschedulable") && c.reason == "Publishing" => {
                Check::Done(())
            }
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("the scheduler's refusal shown at once");
    let stalled = wait_until(
        "the Job failed at its deadline",
        Duration::from_secs(90),
        || async {
            let c = condition(&t.env, "web", "Stalled").await;
            if c.status == "True" && c.reason == "PublishFailed" {
                Check::Done(c)
            } else {
                Check::Pending(format!("{c:?}"))
            }
        },
    )
    .await
    .expect("stalled after its only attempt");
    assert!(
        stalled.message.contains("DeadlineExceeded") && stalled.message.contains("Unschedulable"),
        "{}",
        stalled.message
    );
}
