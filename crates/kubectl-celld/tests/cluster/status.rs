//! `status` against the real API server, with the StatefulSet, pods, fleet status and Events
//! made by the test (the operator need not run): a healthy fleet, a broken one, the table.

use crate::support::{self, TestResult};
use celld_api::CelldFleet;
use celld_testkit::{Check, wait_until};
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    Container, Event, EventSource, ObjectReference, PodSpec, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::Api;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::json;
use std::time::Duration;

async fn statefulset(env: &celld_testkit::TestEnv, fleet: &str, replicas: i32) -> TestResult {
    let labels = support::node_labels(fleet);
    let sts = StatefulSet {
        metadata: ObjectMeta {
            name: Some(fleet.into()),
            ..ObjectMeta::default()
        },
        spec: Some(StatefulSetSpec {
            replicas: Some(replicas),
            service_name: Some(format!("{fleet}-peers")),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "celld".into(),
                        image: Some(celld_api::DEFAULT_IMAGE.into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..StatefulSetSpec::default()
        }),
        ..StatefulSet::default()
    };
    let api: Api<StatefulSet> = env.api();
    api.create(&PostParams::default(), &sts).await?;
    wait_until(
        "the StatefulSet's pods to be ready",
        Duration::from_secs(60),
        || async {
            match api.get(fleet).await {
                Ok(s) => {
                    let ready = s.status.and_then(|st| st.ready_replicas).unwrap_or(0);
                    if ready == replicas {
                        Check::Done(())
                    } else {
                        Check::Pending(format!("{ready}/{replicas} ready"))
                    }
                }
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    Ok(())
}

async fn event(
    env: &celld_testkit::TestEnv,
    fleet: &CelldFleet,
    type_: &str,
    reason: &str,
    message: &str,
) -> TestResult {
    let now = Time(jiff::Timestamp::now());
    let e = Event {
        metadata: ObjectMeta {
            generate_name: Some(format!(
                "{}-",
                fleet.metadata.name.as_deref().unwrap_or_default()
            )),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            api_version: Some("platform.celld.dev/v1alpha1".into()),
            kind: Some("CelldFleet".into()),
            name: fleet.metadata.name.clone(),
            namespace: Some(env.namespace().into()),
            uid: fleet.metadata.uid.clone(),
            ..ObjectReference::default()
        },
        type_: Some(type_.into()),
        reason: Some(reason.into()),
        message: Some(message.into()),
        count: Some(1),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        source: Some(EventSource {
            component: Some("celld-operator".into()),
            ..EventSource::default()
        }),
        ..Event::default()
    };
    env.api::<Event>()
        .create(&PostParams::default(), &e)
        .await?;
    Ok(())
}

/// A table row that starts with (or contains) `first` has every one of `cells`.
fn assert_row(run: &support::Run, first: &str, cells: &[&str]) -> TestResult {
    let row = run
        .stdout
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == first))
        .ok_or_else(|| format!("no row with {first:?} in\n{run}"))?;
    for cell in cells {
        assert!(row.contains(cell), "no {cell:?} in row {row:?}");
    }
    Ok(())
}

async fn patch_status(
    env: &celld_testkit::TestEnv,
    name: &str,
    status: serde_json::Value,
) -> TestResult {
    env.api::<CelldFleet>()
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await?;
    Ok(())
}

#[tokio::test]
async fn status_of_a_healthy_fleet_in_text_json_and_the_table() -> TestResult {
    let env = support::env("plugin-status-ok").await?;
    let s3 = env.s3()?;
    let bucket = support::bucket(&s3, "status-ok");
    support::secret(&env, "s3-creds").await?;
    support::store(&env, "minio", "s3-creds").await?;
    let mut spec = celld_api::CelldFleetSpec::with_bucket(&bucket);
    spec.store_ref = Some(celld_api::StoreRef {
        name: "minio".into(),
    });
    spec.replicas = 2;
    let fleet = env
        .api::<CelldFleet>()
        .create(&PostParams::default(), &CelldFleet::new("web", spec))
        .await?;
    statefulset(&env, "web", 2).await?;
    let now = jiff::Timestamp::now().to_string();
    patch_status(
        &env,
        "web",
        json!({
            "observedGeneration": 1,
            "replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
            "url": "https://web.example.com/",
            "deployment": {"version": "0123456789abcdef", "scriptName": "web", "rolloutPercent": 100},
            "conditions": [{"type": "Ready", "status": "True", "reason": "Serving",
                            "message": "2/2 nodes ready", "lastTransitionTime": now,
                            "observedGeneration": 1}],
        }),
    )
    .await?;
    event(
        &env,
        &fleet,
        "Normal",
        "Reconciled",
        "applied the StatefulSet and Services",
    )
    .await?;

    let run = support::run(&env, &["status", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    for want in [
        "Name:        web".to_string(),
        format!("Namespace:   {}", env.namespace()),
        "URL:         https://web.example.com/".into(),
        format!("Image:       {}", celld_api::DEFAULT_IMAGE),
        "Worker:      version 0123456789abcdef (script web, 100% of traffic)".into(),
        format!("Storage:     {bucket} via CelldObjectStore minio"),
        format!("endpoint {}, region us-east-1", s3.endpoint),
        "credentials from Secret s3-creds (exists)".into(),
        "Rollout:     StatefulSet web: 2/2 ready, 2/2 updated, revision web-".into(),
    ] {
        assert!(run.stdout.contains(&want), "no {want:?} in\n{run}");
    }
    assert_row(&run, "Ready", &["True", "Serving", "2/2 nodes ready"])?;
    assert_row(
        &run,
        "Reconciled",
        &[
            "Normal",
            "CelldFleet/web",
            "applied the StatefulSet and Services",
        ],
    )?;
    for pod in ["web-0", "web-1"] {
        let line = run
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with(pod))
            .ok_or(pod)?;
        assert!(line.contains("Running") && line.contains("1/1"), "{line}");
    }
    assert!(
        !run.stdout.contains(&s3.secret_access_key),
        "no secret in the output"
    );

    let run = support::run(&env, &["status", "web", "-o", "json"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(v["worker"]["version"], "0123456789abcdef");
    assert_eq!(v["storage"]["store"], "minio");
    assert_eq!(v["storage"]["endpoint"], s3.endpoint.as_str());
    assert_eq!(v["storage"]["secretExists"], true);
    assert_eq!(v["rollout"]["readyReplicas"], 2);
    assert_eq!(v["pods"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["conditions"][0]["reason"], "Serving");

    let run = support::run(&env, &["status"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let row = run
        .stdout
        .lines()
        .find(|l| l.starts_with("web "))
        .ok_or("no row for web")?;
    for cell in [
        "True",
        "2/2",
        "https://web.example.com/",
        "0123456789abcdef",
        "minio",
        bucket.as_str(),
    ] {
        assert!(row.contains(cell), "no {cell:?} in {row:?}");
    }
    let run = support::run(&env, &["status", "-A", "-o", "yaml"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains(&format!("namespace: {}", env.namespace())),
        "{run}"
    );
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn status_of_a_broken_fleet_says_what_is_wrong() -> TestResult {
    let env = support::env("plugin-status-bad").await?;
    let s3 = env.s3()?;
    // A unique name, so the "exists in namespace" hint below names only this test's namespace.
    let name = format!(
        "broken-{}",
        env.namespace().rsplit('-').next().unwrap_or("x")
    );
    let fleet = support::fleet(&env, &name, "gone", &support::bucket(&s3, "status-bad")).await?;
    let now = jiff::Timestamp::now().to_string();
    patch_status(
        &env,
        &name,
        json!({
            "conditions": [{"type": "Ready", "status": "False", "reason": "StoreNotFound",
                            "message": "CelldObjectStore 'gone' does not exist", "lastTransitionTime": now}],
        }),
    )
    .await?;
    event(
        &env,
        &fleet,
        "Warning",
        "StoreNotFound",
        "CelldObjectStore 'gone' does not exist",
    )
    .await?;

    let run = support::run(&env, &["status", &name]).await?;
    assert_eq!(run.code, 0, "a broken fleet is still reported:\n{run}");
    for want in [
        format!(
            "ERROR: CelldObjectStore 'gone' (spec.storeRef.name) does not exist in namespace '{}': create it or fix spec.storeRef.name",
            env.namespace()
        ),
        format!("StatefulSet {name} not found"),
        "Worker:      unknown: the bucket cannot be read (CelldObjectStore 'gone'".into(),
        "Pods:        none".into(),
    ] {
        assert!(run.stdout.contains(&want), "no {want:?} in\n{run}");
    }
    assert_row(&run, "Ready", &["False", "StoreNotFound"])?;
    assert_row(
        &run,
        "Warning",
        &[
            "StoreNotFound",
            &format!("CelldFleet/{name}"),
            "does not exist",
        ],
    )?;
    let run = support::run(&env, &["status"]).await?;
    assert!(run.stdout.contains("gone (StoreNotFound)"), "{run}");

    // A typo: near names; another namespace: where the fleet is.
    let typo = &name[..name.len() - 1];
    let run = support::run(&env, &["status", typo]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!("did you mean {name}?")),
        "{run}"
    );
    let run = support::run(&env, &["status", &name, "-n", "default"]).await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "a fleet of that name exists in namespace '{}': add -n {}",
            env.namespace(),
            env.namespace()
        )),
        "{run}"
    );
    env.cleanup().await?;
    Ok(())
}
