//! The writer against a recording API server double: what it sends, and what it counts.

use super::*;
use crate::buckets::pointer::Pointer;
use crate::children::fixtures;
use crate::failure::Failure;
use crate::fleet::status::observation::{Acknowledged, ObservedStorage, Route};
use crate::status::writer::double::{self, Sent, taken};
use crate::upgrade::decide::Progress;
use celld_api::reasons::Reason;
use celld_api::{DeploymentStatus, resolve};
use k8s_openapi::api::apps::v1::StatefulSetStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// A client of the recording double, answering status patches with `fleet`.
fn recording(fleet: &CelldFleet) -> (Client, Sent) {
    double::recording(serde_json::to_vec(fleet).unwrap())
}

fn fleet() -> CelldFleet {
    let mut fleet = fixtures::fleet(fixtures::MINIMAL);
    fleet.metadata.resource_version = Some("7".into());
    fleet.metadata.generation = Some(1);
    fleet
}

fn writer(fleet: &CelldFleet) -> (FleetWriter, Sent, Arc<Metrics>) {
    let (client, sent) = recording(fleet);
    let metrics = Arc::new(Metrics::default());
    let (statefulsets, _) = kube::runtime::reflector::store();
    let reporter = Reporter {
        controller: "celld-operator".into(),
        instance: None,
    };
    (
        FleetWriter::new(
            client,
            metrics.clone(),
            reporter,
            statefulsets,
            Arc::default(),
        ),
        sent,
        metrics,
    )
}

fn report(fleet: &CelldFleet, pointer: Pointer, failures: Vec<Failure>) -> Report {
    let storage = resolve::resolve(&fleet.spec, "apps", None).unwrap();
    Report {
        observation: Observation {
            generation: fleet.metadata.generation,
            desired: 1,
            storage: ObservedStorage::Resolved(storage, pointer),
            route: Route::None,
            url: Some("http://local.apps.svc".into()),
            failures,
            upgrade: Progress::Idle,
            progress_deadline_s: 600,
            holders: Vec::new(),
            nodes: None,
            deployed_at: None,
            source: None,
            capacity: None,
            autoscale: None,
            acknowledged: Acknowledged::of(&fleet.spec),
            held: None,
            fences: Vec::new(),
        },
        statefulset: None,
        changed: Vec::new(),
        pruned: Vec::new(),
    }
}

fn deployed() -> Pointer {
    Pointer::Deployed(DeploymentStatus {
        adopted: None,
        observed_deployed_at: None,
        version: "0123456789abcdef".into(),
        script_name: None,
        rollout_percent: Some(100),
    })
}

/// A StatefulSet of `fleet` with `ready` of its one node ready, controlled by `owner`.
fn statefulset(fleet: &CelldFleet, ready: i32, owner: &str) -> StatefulSet {
    let mut sts = StatefulSet::default();
    sts.metadata.name = fleet.metadata.name.clone();
    sts.metadata.namespace = Some("apps".into());
    sts.metadata.generation = Some(1);
    sts.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "platform.celld.dev/v1alpha1".into(),
        kind: "CelldFleet".into(),
        name: fleet.metadata.name.clone().unwrap(),
        uid: owner.into(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    sts.status = Some(StatefulSetStatus {
        observed_generation: Some(1),
        replicas: 1,
        ready_replicas: Some(ready),
        updated_replicas: Some(1),
        ..StatefulSetStatus::default()
    });
    sts
}

const STATUS: &str =
    "PATCH /apis/platform.celld.dev/v1alpha1/namespaces/apps/celldfleets/local/status";
const EVENT: &str = "POST /apis/events.k8s.io/v1/namespaces/apps/events";

#[tokio::test]
async fn a_failure_is_counted_each_reconcile_and_announced_once() {
    let fleet = fleet();
    let (writer, sent, metrics) = writer(&fleet);
    let failing = || {
        report(
            &fleet,
            Pointer::Unknown("timed out".into()),
            vec![Failure::bucket("timed out")],
        )
    };

    assert!(writer.publish(&fleet, failing()).await.unwrap().wrote);
    let first = taken(&sent);
    assert_eq!(
        first[0], STATUS,
        "the status first, then its Events: {first:?}"
    );
    assert!(first[1..].iter().all(|r| r == EVENT), "{first:?}");
    assert!(first.len() >= 2, "the failure has its Warning: {first:?}");
    assert_eq!(metrics.failures(Reason::BucketUnreadable), 1);

    // The cache has not caught up with the write: the same fleet version is seen again, and
    // the written status is the one compared with.
    assert!(!writer.publish(&fleet, failing()).await.unwrap().wrote);
    assert_eq!(
        taken(&sent),
        Vec::<String>::new(),
        "nothing new to write or announce"
    );
    assert_eq!(
        metrics.failures(Reason::BucketUnreadable),
        2,
        "each reconcile that meets the failure counts it once"
    );
}

#[tokio::test]
async fn applied_children_are_announced_by_the_writer_once_the_fleet_has_a_status() {
    let mut fleet = fleet();
    let (writer, sent, _) = writer(&fleet);
    let mut created = report(&fleet, deployed(), Vec::new());
    created.changed = vec!["StatefulSet/local".into()];
    writer.publish(&fleet, created).await.unwrap();
    assert_eq!(
        taken(&sent),
        vec![STATUS.to_string()],
        "a fleet's first children are said by its status, not an Event each"
    );

    fleet.status = writer.written.newest(&fleet);
    let mut applied = report(&fleet, deployed(), Vec::new());
    applied.changed = vec!["StatefulSet/local".into()];
    writer.publish(&fleet, applied).await.unwrap();
    let requests = taken(&sent);
    assert_eq!(
        requests.first().map(String::as_str),
        Some(EVENT),
        "{requests:?}"
    );

    // Nothing changed and nothing applied: no request at all.
    writer
        .publish(&fleet, report(&fleet, deployed(), Vec::new()))
        .await
        .unwrap();
    assert_eq!(taken(&sent), Vec::<String>::new());
}

#[tokio::test]
async fn the_follower_writes_only_when_ready_changes() {
    let fleet = fleet();
    let uid = fleet.metadata.uid.clone().unwrap();
    let (writer, sent, metrics) = writer(&fleet);
    writer
        .publish(&fleet, report(&fleet, deployed(), Vec::new()))
        .await
        .unwrap();
    taken(&sent);

    writer.follow(&fleet, statefulset(&fleet, 0, &uid)).await;
    assert_eq!(
        taken(&sent),
        Vec::<String>::new(),
        "still not ready: Ready did not change"
    );

    writer
        .follow(&fleet, statefulset(&fleet, 1, "another-owner"))
        .await;
    assert_eq!(
        taken(&sent),
        Vec::<String>::new(),
        "not this fleet's StatefulSet"
    );

    writer.follow(&fleet, statefulset(&fleet, 1, &uid)).await;
    let requests = taken(&sent);
    assert_eq!(
        requests.first().map(String::as_str),
        Some(STATUS),
        "{requests:?}"
    );
    assert_eq!(
        metrics.total_writes(),
        0,
        "the writer counts nothing itself: the client does"
    );

    let mut newer = fleet.clone();
    newer.metadata.generation = Some(2);
    writer.follow(&newer, statefulset(&fleet, 0, &uid)).await;
    assert_eq!(
        taken(&sent),
        Vec::<String>::new(),
        "a fleet changed since its last reconcile waits for that reconcile"
    );
}

#[tokio::test]
async fn a_written_status_is_kept_only_until_the_cache_catches_up() {
    let fleet = fleet();
    let uid = fleet.metadata.uid.clone().unwrap();
    let (writer, _sent, _) = writer(&fleet);
    writer
        .publish(&fleet, report(&fleet, deployed(), Vec::new()))
        .await
        .unwrap();
    assert!(
        writer.written.newest(&fleet).is_some(),
        "the status just written"
    );

    writer.written.retain(&HashMap::from([(uid.as_str(), "7")]));
    assert!(
        writer.written.newest(&fleet).is_some(),
        "the cache still holds the fleet as it was before the write"
    );
    writer.written.retain(&HashMap::from([(uid.as_str(), "8")]));
    assert_eq!(
        writer.written.newest(&fleet),
        None,
        "the cache caught up: the fleet's own status is the one to start from"
    );
}

#[tokio::test]
async fn a_drift_is_counted_and_announced_with_its_report() {
    use crate::fleet::status::observation::SourceObserved;
    use crate::source::terms::Synced;
    let fleet = fleet();
    let (writer, sent, metrics) = writer(&fleet);
    let drifted = |warning: Option<&str>| {
        let mut report = report(&fleet, deployed(), Vec::new());
        report.observation.source = Some(Box::new(SourceObserved {
            status: celld_api::SourceStatus::default(),
            synced: Synced {
                status: Some(false),
                reason: Reason::Drifted,
                message: "the bucket serves a version spec.source did not publish".into(),
                stalled: false,
                progressing: true,
            },
            drift_warning: warning.map(str::to_string),
        }));
        report
    };
    let drifts = || {
        metrics
            .encode()
            .lines()
            .find(|l| l.starts_with("celld_operator_source_drift_total "))
            .map(str::to_string)
    };

    writer
        .publish(&fleet, drifted(Some("someone else deployed v2")))
        .await
        .unwrap();
    assert_eq!(
        drifts().as_deref(),
        Some("celld_operator_source_drift_total 1")
    );
    assert!(
        taken(&sent).contains(&EVENT.to_string()),
        "the drift's Warning"
    );

    // A later reconcile that sees the same drift again (no warning left to give) counts nothing.
    writer.publish(&fleet, drifted(None)).await.unwrap();
    assert_eq!(
        drifts().as_deref(),
        Some("celld_operator_source_drift_total 1")
    );
}
