//! Tests of the status computation: conditions here, failures in [`failures`], what the
//! status tells about settings in [`advice`], replica counts in [`replicas`], what every node
//! serves in [`adoption`].

mod adoption;
mod advice;
mod failures;
mod replicas;

use super::*;
use crate::failure::Failure;
use crate::fleet::status::observation::{Acknowledged, Observation, ObservedStorage, Route};
use crate::upgrade::decide::Progress;
use celld_api::DeploymentStatus;
use celld_api::ResolvedStorage;
use celld_api::conditions::{
    DEGRADED, DEPLOYED, PROGRESSING, READY, ROUTE_READY, STORAGE_RESOLVED,
};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::apps::v1::StatefulSetStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::sync::Arc;

fn storage() -> ResolvedStorage {
    ResolvedStorage {
        store: Some("minio".into()),
        endpoint: Some("http://minio:9000".into()),
        allow_http: true,
        credentials_secret: Some("creds".into()),
        ..crate::buckets::storage_fixture::s3("s3://celld/app")
    }
}

fn sts(ready: i32) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            generation: Some(2),
            ..ObjectMeta::default()
        },
        spec: None,
        status: Some(StatefulSetStatus {
            observed_generation: Some(2),
            replicas: 2,
            ready_replicas: Some(ready),
            updated_replicas: Some(2),
            ..StatefulSetStatus::default()
        }),
    }
}

fn get<'a>(s: &'a CelldFleetStatus, t: &str) -> &'a Condition {
    conditions::find(&s.conditions, t).unwrap()
}

/// Reconciling and Stalled of `s`, as (status, reason).
fn kstatus(s: &CelldFleetStatus) -> [(&str, &str); 2] {
    [
        celld_api::conditions::RECONCILING,
        celld_api::conditions::STALLED,
    ]
    .map(|t| {
        let c = get(s, t);
        (c.status.as_str(), c.reason.as_str())
    })
}

/// What a reconcile of a serving fleet observed, at rest: each test changes what it is about.
fn at_rest() -> Observation {
    Observation {
        generation: Some(3),
        desired: 2,
        storage: ObservedStorage::Resolved(storage(), deployed()),
        route: Route::Ingress,
        url: Some("http://a".into()),
        failures: Vec::new(),
        upgrade: Progress::Idle,
        progress_deadline_s: 600,
        holders: Vec::new(),
        nodes: None,
        deployed_at: None,
        source: None,
        capacity: None,
        autoscale: None,
        acknowledged: Acknowledged::of(&celld_api::CelldFleetSpec::with_bucket("s3://celld/app")),
        held: None,
        fences: Vec::new(),
    }
}

fn deployed() -> Pointer {
    Pointer::Deployed(DeploymentStatus {
        adopted: None,
        observed_deployed_at: None,
        version: "0123456789abcdef".into(),
        script_name: Some("hello".into()),
        rollout_percent: Some(100),
    })
}

#[test]
fn serving_fleet_is_ready_and_stable() {
    let (st, p, s) = (storage(), deployed(), sts(2));
    let o_observation = Observation {
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&status, READY).status, "True");
    assert_eq!(get(&status, PROGRESSING).status, "False");
    assert_eq!(get(&status, DEGRADED).status, "False");
    assert_eq!(
        status.deployment.as_ref().unwrap().version,
        "0123456789abcdef"
    );
    assert_eq!(
        status.storage.as_ref().unwrap().store.as_deref(),
        Some("minio")
    );
    assert_eq!(
        kstatus(&status),
        [("False", "AsExpected"), ("False", "AsExpected")]
    );

    let starting = sts(1);
    let o = o_observation.observed(o.name, Some(&starting));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(
        kstatus(&status),
        [("True", "RollingOut"), ("False", "AsExpected")],
        "a fleet on its way is Reconciling"
    );
}

#[test]
fn missing_pointer_holds_and_explains() {
    let (st, p) = (storage(), Pointer::Missing);
    let o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        ..at_rest()
    };
    let o = o_observation.observed("app", None);
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    let deployed = get(&status, DEPLOYED);
    assert_eq!(
        (deployed.status.as_str(), deployed.reason.as_str()),
        ("False", "NoDeployment")
    );
    assert!(
        deployed
            .message
            .contains("kubectl celld deploy DIR --fleet app")
    );
    let stalled = get(&status, celld_api::conditions::STALLED);
    assert_eq!(
        (stalled.status.as_str(), stalled.reason.as_str()),
        ("True", "NoDeployment"),
        "nothing moves until someone deploys a Worker"
    );
    assert!(
        stalled
            .message
            .contains("kubectl celld deploy DIR --fleet app")
    );
    assert_eq!(get(&status, READY).reason, "NoDeployment");
}

#[test]
fn unresolved_store_is_degraded_and_keeps_last_deployment() {
    let previous = CelldFleetStatus {
        deployment: Some(DeploymentStatus {
            adopted: None,
            version: "v1".into(),
            ..DeploymentStatus::default()
        }),
        source: Some(Box::new(celld_api::SourceStatus {
            last_published: Some(celld_api::PublishedRevision {
                revision: "r.example.com/w:1".into(),
                version: Some("v1".into()),
                ..celld_api::PublishedRevision::default()
            }),
            ..celld_api::SourceStatus::default()
        })),
        ..CelldFleetStatus::default()
    };
    let failure = Failure::storage(&celld_api::ResolveError::StoreNotFound {
        name: "x".into(),
        namespace: "ns".into(),
    });
    let o_observation = Observation {
        generation: Some(1),
        desired: 1,
        storage: ObservedStorage::Failed(failure.clone()),
        route: Route::None,
        url: None,
        failures: vec![failure.clone()],
        ..at_rest()
    };
    let o = o_observation.observed("app", None);
    let status = compute(Some(&previous), &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&status, DEGRADED).reason, "StoreNotFound");
    assert_eq!(get(&status, STORAGE_RESOLVED).status, "False");
    assert_eq!(status.deployment.as_ref().unwrap().version, "v1");
    assert_eq!(
        status.source, previous.source,
        "what was published stays recorded"
    );
    assert_eq!(
        kstatus(&status),
        [("False", "StoreNotFound"), ("True", "StoreNotFound")],
        "a missing store needs a person: Stalled"
    );
}

#[test]
fn missing_gateway_api_is_reported() {
    let (st, p, s) = (storage(), deployed(), sts(2));
    let o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::GatewayApiMissing,
        url: None,
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&status, ROUTE_READY).reason, "GatewayAPIMissing");
    assert_eq!(get(&status, READY).status, "False");
    assert_eq!(kstatus(&status)[1], ("True", "GatewayAPIMissing"));
}

#[test]
fn same_observations_give_the_same_status() {
    let (st, p, s) = (storage(), deployed(), sts(1));
    let o_observation = Observation {
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let first = compute(None, &o, Timestamp::UNIX_EPOCH);
    // Later, but within the rollout's deadline.
    let later = Timestamp::from_second(599).unwrap();
    assert_eq!(compute(Some(&first), &o, later), first);
}
