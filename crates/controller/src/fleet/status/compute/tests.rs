//! Tests of the status computation: conditions here, replica counts in [`replicas`], what
//! every node serves in [`adoption`].

mod adoption;
mod replicas;

use super::*;
use crate::failure::Failure;
use crate::fleet::status::observation::{Acknowledged, Observation, ObservedStorage, Route};
use crate::upgrade::decide::Progress;
use celld_api::ResolvedStorage;
use celld_api::conditions::{
    DEGRADED, DEPLOYED, PROGRESSING, READY, ROUTE_READY, STORAGE_RESOLVED,
};
use celld_api::{BucketUrl, DeploymentStatus};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::apps::v1::StatefulSetStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::sync::Arc;

fn storage() -> ResolvedStorage {
    ResolvedStorage {
        store: Some("minio".into()),
        bucket: BucketUrl::parse("s3://celld/app").unwrap(),
        endpoint: Some("http://minio:9000".into()),
        region: "us-east-1".into(),
        allow_http: true,
        azure_storage_account: None,
        credentials_secret: Some("creds".into()),
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

fn refused(kind: &str, message: &str) -> Failure {
    Failure::child(
        kind,
        "app",
        "apply",
        &crate::error::Error::kube(
            "applying",
            kube::Error::Api(Box::new(
                kube::core::Status::failure(message, "Invalid").with_code(422),
            )),
        ),
    )
}

#[test]
fn a_refused_child_makes_the_fleet_degraded_and_not_ready() {
    let (st, p, s) = (storage(), deployed(), sts(2));
    let failures = [
        refused("Service", "spec.ports[1].name: Duplicate value"),
        refused("Ingress", "spec.rules[0].host: Invalid value"),
    ];
    let o_observation = Observation {
        generation: Some(4),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        url: None,
        failures: failures.to_vec(),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    let degraded = get(&status, DEGRADED);
    assert_eq!(
        (degraded.status.as_str(), degraded.reason.as_str()),
        ("True", "ChildRejected")
    );
    assert!(
        degraded.message.contains("Service app")
            && degraded.message.contains("spec.ports[1].name")
            && degraded.message.contains("Ingress app")
            && degraded.message.contains("spec.rules[0].host"),
        "{}",
        degraded.message
    );
    let ready = get(&status, READY);
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "ChildRejected")
    );
    assert!(ready.message.contains("Service app"), "{}", ready.message);
    let route = get(&status, ROUTE_READY);
    assert_eq!(
        (route.status.as_str(), route.reason.as_str()),
        ("False", "ChildRejected")
    );
    assert_eq!(get(&status, STORAGE_RESOLVED).status, "True");
}

#[test]
fn an_unreadable_bucket_is_degraded_but_the_nodes_still_serve() {
    let (st, s) = (storage(), sts(2));
    let p = Pointer::Unknown("connection refused".into());
    let failures = [Failure::bucket("connection refused")];
    let o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        failures: failures.to_vec(),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&status, DEGRADED).reason, "BucketUnreadable");
    assert_eq!(get(&status, DEPLOYED).status, "Unknown");
    assert_eq!(get(&status, READY).reason, "Serving");
    assert_eq!(
        kstatus(&status),
        [("True", "BucketUnreadable"), ("False", "AsExpected")],
        "a failure that retrying may end is Reconciling, not Stalled"
    );
}

#[test]
fn a_failure_that_clears_clears_the_condition() {
    let (st, p, s) = (storage(), deployed(), sts(2));
    let failures = [refused("NetworkPolicy", "bad")];
    let mut o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        failures: failures.to_vec(),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let failing = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&failing, DEGRADED).status, "True");
    o_observation.failures = Vec::new();
    let o = o_observation.observed("app", Some(&s));
    let healed = compute(Some(&failing), &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&healed, DEGRADED).reason, "AsExpected");
    assert_eq!(get(&healed, READY).reason, "Serving");
}

#[test]
fn an_autoscaled_fleet_without_idle_eviction_is_told_what_its_new_nodes_miss() {
    use crate::autoscale::decide::{ScaleVerdict, Scaled};
    use crate::fleet::status::observation::AutoscaleObserved;
    use celld_api::conditions::{AUTOSCALING, IDLE_EVICTION};
    use celld_api::reasons::Reason;
    let (st, p, s) = (storage(), deployed(), sts(2));
    let observed = |idle_evict: bool| AutoscaleObserved {
        scaled: Scaled {
            desired: 2,
            status: celld_api::AutoscalingStatus::default(),
            decision: None,
            verdict: ScaleVerdict {
                status: Some(true),
                reason: Reason::Steady,
                message: "2 nodes hold the load".into(),
            },
            wake_at: None,
            paused: false,
        },
        idle_evict,
    };
    let status = |autoscale: &AutoscaleObserved| {
        let o_observation = Observation {
            storage: ObservedStorage::Resolved(st.clone(), p.clone()),
            autoscale: Some(Box::new(autoscale.clone())),
            ..at_rest()
        };
        let o = o_observation.observed("app", Some(&s));
        compute(None, &o, Timestamp::UNIX_EPOCH)
    };

    let unset = status(&observed(false));
    let idle = get(&unset, IDLE_EVICTION);
    assert_eq!(
        (idle.status.as_str(), idle.reason.as_str()),
        ("False", "IdleEvictionUnset")
    );
    assert!(
        idle.message.contains("CELLD_IDLE_EVICT_S") && idle.message.contains("set it"),
        "names the variable and what to do: {}",
        idle.message
    );
    assert_eq!(get(&unset, AUTOSCALING).reason, "Steady");

    let set = status(&observed(true));
    let idle = get(&set, IDLE_EVICTION);
    assert_eq!(
        (idle.status.as_str(), idle.reason.as_str()),
        ("True", "IdleEvictionSet")
    );
}

#[test]
fn fleet_durability_on_ephemeral_storage_is_at_risk_and_warned_about_once() {
    use celld_api::conditions::DURABILITY_AT_RISK;
    use celld_api::{CelldFleetSpec, Durability, LocalStorageType};
    let s = sts(2);
    let status = |previous: Option<&CelldFleetStatus>, durability, type_| {
        let mut spec = CelldFleetSpec::with_bucket("s3://celld/app");
        spec.durability = durability;
        spec.local_storage.type_ = type_;
        let observation = Observation {
            acknowledged: Acknowledged::of(&spec),
            ..at_rest()
        };
        compute(
            previous,
            &observation.observed("app", Some(&s)),
            Timestamp::UNIX_EPOCH,
        )
    };
    let at_risk = |s: &CelldFleetStatus| {
        let c = get(s, DURABILITY_AT_RISK);
        (c.status.clone(), c.reason.clone())
    };
    use Durability::{Bucket, Fleet};
    use LocalStorageType::{Ephemeral, Persistent};
    let safe = status(None, None, Ephemeral);
    assert_eq!(at_risk(&safe), ("False".into(), "BucketDurability".into()));
    assert_eq!(
        at_risk(&status(None, None, Persistent)),
        ("False".into(), "PersistentWorkStorage".into())
    );
    assert_eq!(
        at_risk(&status(None, Some(Bucket), Persistent)),
        ("False".into(), "BucketDurability".into())
    );
    let risky = status(Some(&safe), Some(Fleet), Ephemeral);
    assert_eq!(
        at_risk(&risky),
        ("True".into(), "FleetDurabilityOnEphemeral".into())
    );
    let message = &get(&risky, DURABILITY_AT_RISK).message;
    assert!(
        message.contains("spec.localStorage.type") && message.contains("spec.durability"),
        "names the fields and the fix: {message}"
    );
    // Admitted: the fleet still serves.
    assert_eq!(get(&risky, READY).status, "True");

    let events = |previous: Option<&CelldFleetStatus>, status: &CelldFleetStatus| {
        crate::fleet::status::events::transitions(previous, status, "i", None, &[])
            .into_iter()
            .filter(|n| n.note.starts_with(DURABILITY_AT_RISK))
            .map(|n| (n.type_, n.reason))
            .collect::<Vec<_>>()
    };
    use kube::runtime::events::EventType;
    assert_eq!(events(None, &safe), [], "a new fleet at no risk: nothing");
    assert_eq!(
        events(Some(&safe), &risky),
        [(EventType::Warning, "FleetDurabilityOnEphemeral".to_string())]
    );
    assert_eq!(events(None, &risky).len(), 1, "a new fleet at risk: warned");
    assert_eq!(events(Some(&risky), &risky), [], "once");
}

#[test]
fn a_held_setting_is_said_and_reconciling_while_the_nodes_move_and_stalled_on_an_old_image() {
    use crate::upgrade::held::HeldBack;
    use celld_api::conditions::{RECONCILING, SETTINGS_HELD, STALLED};
    let s = sts(2);
    let status = |held: Option<Vec<HeldBack>>| {
        let observation = Observation { held, ..at_rest() };
        compute(
            None,
            &observation.observed("app", Some(&s)),
            Timestamp::UNIX_EPOCH,
        )
    };
    let pair = |st: &CelldFleetStatus, t: &str| {
        let c = get(st, t);
        (c.status.clone(), c.reason.clone())
    };
    let none = status(None);
    assert!(
        !none.conditions.iter().any(|c| c.type_ == SETTINGS_HELD),
        "absent when spec.env uses no held setting"
    );
    let used = status(Some(Vec::new()));
    assert_eq!(
        pair(&used, SETTINGS_HELD),
        ("False".into(), "SettingsInUse".into())
    );
    assert_eq!(get(&used, RECONCILING).status, "False");

    let back = |on_its_way| {
        HeldBack {
        name: "CELLD_LTX_RETENTION_SECS".into(),
        why: "spec.env's CELLD_LTX_RETENTION_SECS reaches the nodes once every node runs celld v0.6.1 or later: 2 of 3 nodes run it, not yet app-0".into(),
        on_its_way,
    }
    };
    let moving = status(Some(vec![back(true)]));
    assert_eq!(
        pair(&moving, SETTINGS_HELD),
        ("True".into(), "HeldForNodes".into())
    );
    assert!(
        get(&moving, SETTINGS_HELD)
            .message
            .contains("not yet app-0")
    );
    assert_eq!(
        pair(&moving, RECONCILING),
        ("True".into(), "HeldForNodes".into())
    );
    assert_eq!(get(&moving, STALLED).status, "False");

    let stuck = status(Some(vec![back(true), back(false)]));
    assert_eq!(
        pair(&stuck, SETTINGS_HELD),
        ("True".into(), "HeldForImage".into())
    );
    assert_eq!(
        pair(&stuck, STALLED),
        ("True".into(), "HeldForImage".into())
    );
}
