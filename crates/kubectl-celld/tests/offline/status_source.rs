//! `status` of a fleet whose Worker comes from spec.source: the chain from the source to the
//! nodes, in text and in `-o json` (snapshots). A fleet without spec.source prints as before
//! (the snapshots of `status_render`).

use crate::status_render::{at, now, pod};
use celld_api::labels::SOURCE_SUSPENDED;
use celld_api::{
    CelldFleet, CelldFleetSpec, CelldFleetStatus, DeploymentStatus, DriftPolicy, FluxSourceKind,
    FluxSourceRef, PublishAttempt, PublishPhase, PublishedRevision, SourceDrift, SourceRevision,
    SourceStatus, WorkerSource,
};
use kubectl_celld::commands::status::render::render;
use kubectl_celld::commands::status::report::{
    ConditionReport, FleetReport, RolloutReport, StorageReport,
};
use kubectl_celld::commands::status::source;
use std::collections::BTreeMap;

const IMAGE: &str = "registry.example.com/web-worker:1.4.2@sha256:3b6c0f5e2a1d4c7b8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5";
const PUBLISHED: &str = "9f2c4e1a0b7d3c55";
const DEPLOYED_BY_HAND: &str = "0123456789abcdef";

fn time(secs_ago: i64) -> String {
    at(secs_ago).unwrap().0.to_string()
}

fn fleet(source: WorkerSource, status: Option<SourceStatus>) -> CelldFleet {
    let mut spec = CelldFleetSpec::with_bucket("s3://celld/web");
    spec.source = Some(Box::new(source));
    let mut fleet = CelldFleet::new("web", spec);
    fleet.metadata.namespace = Some("apps".into());
    fleet.status = status.map(|s| CelldFleetStatus {
        source: Some(Box::new(s)),
        ..CelldFleetStatus::default()
    });
    fleet
}

fn condition(status: &str, reason: &str, message: &str) -> ConditionReport {
    ConditionReport {
        type_: "SourceSynced".into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: at(240),
    }
}

fn published(revision: &str, version: &str, secs_ago: i64) -> PublishedRevision {
    PublishedRevision {
        revision: revision.into(),
        digest: None,
        version: Some(version.into()),
        published_at: time(secs_ago),
        key: "k1".into(),
    }
}

fn report(
    fleet: &CelldFleet,
    worker: Option<DeploymentStatus>,
    synced: Vec<ConditionReport>,
) -> FleetReport {
    FleetReport {
        name: "web".into(),
        namespace: "apps".into(),
        created: at(86_400),
        url: Some("https://web.example.com/".into()),
        image: "ghcr.io/denoland/celld:v0.4.0".into(),
        replicas: 2,
        status_reported: fleet.status.is_some(),
        source: source::report(fleet, &synced),
        worker,
        storage: StorageReport {
            bucket: "s3://celld/web".into(),
            region: Some("us-east-1".into()),
            credentials_secret: Some("creds".into()),
            secret_exists: Some(true),
            ..StorageReport::default()
        },
        rollout: RolloutReport {
            stateful_set: "web".into(),
            found: true,
            replicas: 2,
            ready_replicas: 2,
            updated_replicas: 2,
            spec_observed: true,
            ..RolloutReport::default()
        },
        pods: vec![
            pod("web-0", "Running", "1/1", 0, Some("10.244.0.5")),
            pod("web-1", "Running", "1/1", 0, Some("10.244.0.6")),
        ],
        nodes: vec![],
        capacity: None,
        autoscaling: None,
        conditions: synced,
        events: vec![],
        warnings: vec![],
    }
}

fn serving(version: &str, adopted: &str) -> Option<DeploymentStatus> {
    Some(DeploymentStatus {
        version: version.into(),
        script_name: Some("web".into()),
        adopted: Some(adopted.into()),
        ..DeploymentStatus::default()
    })
}

/// Someone deployed by hand over the published source; the operator corrects it (Correct).
#[test]
fn drifted_fleet_being_corrected() {
    let status = SourceStatus {
        desired: Some(SourceRevision {
            revision: IMAGE.into(),
            digest: None,
        }),
        last_attempted: Some(PublishAttempt {
            revision: IMAGE.into(),
            job: "web-src-3f9c2a1b7e".into(),
            attempt: 2,
            failures: 0,
            phase: PublishPhase::Running,
            message: None,
            started_at: time(20),
            finished_at: None,
            key: "k1".into(),
        }),
        last_published: Some(published(IMAGE, PUBLISHED, 7200)),
        drift: Some(SourceDrift {
            version: Some(DEPLOYED_BY_HAND.into()),
            since: time(45),
            corrections: 1,
            corrections_since: Some(time(45)),
        }),
        history: vec![],
        rollout: None,
    };
    let fleet = fleet(WorkerSource::from_image(IMAGE), Some(status));
    let synced = condition(
        "False",
        "Drifted",
        "the bucket pointer names version 0123456789abcdef, not 9f2c4e1a0b7d3c55 published from the source; publishing the source again (driftPolicy Correct)",
    );
    let report = report(&fleet, serving(DEPLOYED_BY_HAND, "2/2"), vec![synced]);
    insta::assert_snapshot!(render(&report, now()));
    insta::assert_snapshot!(
        "drifted_fleet_being_corrected_json",
        serde_json::to_string_pretty(&report).unwrap()
    );
}

/// `kubectl celld rollback` suspended a Flux source whose last publish failed.
#[test]
fn suspended_by_a_rollback_after_a_failed_publish() {
    let revision = "main@sha1:5f1c2e9a";
    let status = SourceStatus {
        desired: Some(SourceRevision {
            revision: revision.into(),
            digest: Some("sha256:77aa".into()),
        }),
        last_attempted: Some(PublishAttempt {
            revision: revision.into(),
            job: "web-src-8d1e0c4b2a".into(),
            attempt: 5,
            failures: 5,
            phase: PublishPhase::Failed,
            message: Some(
                "celld deploy exited 1: wrangler.jsonc: main module ./src/index.ts not found"
                    .into(),
            ),
            started_at: time(900),
            finished_at: Some(time(870)),
            key: "k2".into(),
        }),
        last_published: Some(published("main@sha1:0b3d7f11", PUBLISHED, 86_400)),
        drift: None,
        history: vec![],
        rollout: None,
    };
    let mut source = WorkerSource::from_image(IMAGE);
    source.image = None;
    source.source_ref = Some(FluxSourceRef {
        kind: FluxSourceKind::GitRepository,
        name: "web-worker".into(),
    });
    source.path = "workers/web".into();
    source.drift_policy = DriftPolicy::Report;
    let mut fleet = fleet(source, Some(status));
    fleet.metadata.annotations = Some(BTreeMap::from([(
        SOURCE_SUSPENDED.to_string(),
        "kubectl celld rollback to version fedcba9876543210 (from 9f2c4e1a0b7d3c55) at 2026-11-29T11:50:00Z".to_string(),
    )]));
    let synced = condition(
        "False",
        "Suspended",
        "publishing from spec.source is suspended by the annotation platform.celld.dev/source-suspended",
    );
    let report = report(&fleet, serving("fedcba9876543210", "2/2"), vec![synced]);
    let text = source::render(&report, report.source.as_ref().unwrap(), now());
    insta::assert_snapshot!(text);
    let doc = serde_json::to_value(&report).unwrap();
    assert_eq!(doc["source"]["sourceRef"], "GitRepository/web-worker");
    assert_eq!(doc["source"]["suspended"]["by"], "annotation");
    assert_eq!(doc["source"]["lastAttempted"]["phase"], "Failed");
    assert_eq!(doc["source"]["synced"]["reason"], "Suspended");
}

/// A new fleet with spec.source, before the operator reported anything.
#[test]
fn sourced_fleet_before_any_status() {
    let mut source = WorkerSource::from_image(IMAGE);
    source.suspend = true;
    let fleet = fleet(source, None);
    let report = report(&fleet, None, vec![]);
    insta::assert_snapshot!(source::render(
        &report,
        report.source.as_ref().unwrap(),
        now()
    ));
    let doc = serde_json::to_value(&report).unwrap();
    assert_eq!(
        doc["source"],
        serde_json::json!({
            "image": IMAGE,
            "path": "./",
            "driftPolicy": "Correct",
            "suspended": {"by": "spec"}
        })
    );
}
