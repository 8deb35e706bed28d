//! The text of `status`: one healthy and one broken fleet, and the fleet table (snapshots).

use celld_api::{
    Adoption, CelldFleet, CelldFleetSpec, CelldFleetStatus, CelldObjectStore, DeploymentStatus,
    NodeStatus,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kubectl_celld::commands::status::list;
use kubectl_celld::commands::status::render::{render, storage};
use kubectl_celld::commands::status::report::{
    ConditionReport, EventReport, FleetReport, PodReport, RolloutReport, StorageReport,
};

pub(crate) fn at(secs_ago: i64) -> Option<Time> {
    Some(Time(
        now()
            .checked_sub(jiff::SignedDuration::from_secs(secs_ago))
            .unwrap(),
    ))
}

pub(crate) fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

pub(crate) fn pod(
    name: &str,
    phase: &str,
    ready: &str,
    restarts: i32,
    ip: Option<&str>,
) -> PodReport {
    PodReport {
        name: name.into(),
        phase: phase.into(),
        ready: ready.into(),
        restarts,
        created: at(3600),
        ip: ip.map(Into::into),
        node: Some("kwok-node-0".into()),
        image: Some("ghcr.io/denoland/celld:v0.4.0".into()),
    }
}

#[test]
fn healthy_fleet() {
    let report = FleetReport {
        name: "web".into(),
        namespace: "apps".into(),
        created: at(86_400 * 3),
        url: Some("https://web.example.com/api".into()),
        image: "ghcr.io/denoland/celld:v0.4.0".into(),
        replicas: 2,
        status_reported: true,
        source: None,
        worker: Some(DeploymentStatus {
            adopted: Some("1/2".into()),
            observed_deployed_at: None,
            version: "0123456789abcdef".into(),
            script_name: Some("web".into()),
            rollout_percent: Some(100),
        }),
        storage: StorageReport {
            store: Some("minio".into()),
            bucket: "s3://celld/web".into(),
            endpoint: Some("http://minio.storage.svc:9000".into()),
            region: Some("us-east-1".into()),
            azure_storage_account: None,
            service_account: None,
            credentials_secret: Some("s3-creds".into()),
            secret_exists: Some(true),
            error: None,
        },
        rollout: RolloutReport {
            stateful_set: "web".into(),
            found: true,
            replicas: 2,
            ready_replicas: 2,
            updated_replicas: 2,
            current_revision: Some("web-6d5f7c9b8".into()),
            update_revision: Some("web-6d5f7c9b8".into()),
            spec_observed: true,
            upgrade: None,
        },
        pods: vec![
            pod("web-0", "Running", "1/1", 0, Some("10.244.0.5")),
            pod("web-1", "Running", "1/1", 2, Some("10.244.0.6")),
        ],
        nodes: vec![
            NodeStatus {
                name: "web-0".into(),
                version: Some("0123456789abcdef".into()),
                adoption: Adoption::Adopted,
                message: None,
                restoring: Some(0),
                last_restart: None,
            },
            NodeStatus {
                name: "web-1".into(),
                version: Some("fedcba9876543210".into()),
                adoption: Adoption::Refused,
                message: Some("refused 0123456789abcdef: module not found: ./missing.js; it serves fedcba9876543210".into()),
                restoring: Some(3),
                last_restart: None,
            },
        ],
        capacity: None,
        autoscaling: None,
        conditions: vec![ConditionReport {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "Serving".into(),
            message: "2/2 nodes ready".into(),
            last_transition_time: at(1800),
        }],
        events: vec![EventReport {
            type_: "Normal".into(),
            reason: "Reconciled".into(),
            object: "CelldFleet/web".into(),
            message: "applied StatefulSet, Services and Ingress".into(),
            count: 3,
            last_seen: at(120),
        }],
        warnings: vec![],
    };
    insta::assert_snapshot!(render(&report, now()));
    insta::assert_snapshot!(
        "healthy_fleet_json",
        serde_json::to_string_pretty(&report).unwrap()
    );
}

#[test]
fn fleet_moving_to_a_new_celld_version() {
    let mut fleet = fleet("apps", "web", None);
    fleet.spec.image = "ghcr.io/denoland/celld:v0.4.1".into();
    let waiting = "node web-0 reports 2 cells restoring; the next node is updated once every node reports none";
    fleet.status = Some(celld_api::CelldFleetStatus {
        conditions: vec![celld_api::conditions::make(
            &[],
            celld_api::conditions::PROGRESSING,
            Some(true),
            "WaitingForRestores",
            waiting,
            Some(2),
            now(),
        )],
        ..Default::default()
    });
    let upgrade = kubectl_celld::commands::status::gather::upgrade(&fleet);
    assert_eq!(upgrade, Some(format!("WaitingForRestores: {waiting}")));

    let mut moved = pod("web-2", "Running", "1/1", 0, Some("10.244.0.7"));
    moved.image = Some("ghcr.io/denoland/celld:v0.4.1".into());
    let report = FleetReport {
        name: "web".into(),
        namespace: "apps".into(),
        created: at(86_400),
        url: None,
        image: fleet.spec.image.clone(),
        replicas: 3,
        status_reported: true,
        source: None,
        worker: None,
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
            replicas: 3,
            ready_replicas: 3,
            updated_replicas: 1,
            current_revision: Some("web-6d5f7c9b8".into()),
            update_revision: Some("web-7f8e9a0b1".into()),
            spec_observed: true,
            upgrade,
        },
        pods: vec![
            pod("web-0", "Running", "1/1", 0, Some("10.244.0.5")),
            pod("web-1", "Running", "1/1", 0, Some("10.244.0.6")),
            moved,
        ],
        nodes: vec![],
        capacity: None,
        autoscaling: None,
        conditions: vec![],
        events: vec![],
        warnings: vec![],
    };
    insta::assert_snapshot!(render(&report, now()));
}

#[test]
fn broken_fleet() {
    let report = FleetReport {
        name: "broken".into(),
        namespace: "apps".into(),
        created: at(300),
        url: None,
        image: "ghcr.io/denoland/celld:v0.4.0".into(),
        replicas: 1,
        status_reported: true,
        source: None,
        worker: None,
        storage: StorageReport {
            store: Some("missing-store".into()),
            bucket: "s3://celld/broken".into(),
            error: Some("CelldObjectStore 'missing-store' (spec.storeRef.name) does not exist in namespace 'apps': create it or fix spec.storeRef.name".into()),
            ..StorageReport::default()
        },
        rollout: RolloutReport {
            stateful_set: "broken".into(),
            spec_observed: false,
            ..RolloutReport::default()
        },
        pods: vec![pod("broken-0", "CrashLoopBackOff", "0/1", 7, None)],
        nodes: vec![],
        capacity: None,
        autoscaling: None,
        conditions: vec![ConditionReport {
            type_: "Ready".into(),
            status: "False".into(),
            reason: "StoreNotFound".into(),
            message: "CelldObjectStore 'missing-store' does not exist".into(),
            last_transition_time: at(290),
        }],
        events: vec![EventReport {
            type_: "Warning".into(),
            reason: "StoreNotFound".into(),
            object: "CelldFleet/broken".into(),
            message: "CelldObjectStore 'missing-store' does not exist".into(),
            count: 1,
            last_seen: at(30),
        }],
        warnings: vec!["forbidden: you may not list events in namespace 'apps': ask a cluster admin".into()],
    };
    insta::assert_snapshot!(render(&report, now()));
}

#[test]
fn no_status_yet() {
    let report = FleetReport {
        name: "new".into(),
        namespace: "apps".into(),
        created: at(5),
        url: None,
        image: "ghcr.io/denoland/celld:v0.4.0".into(),
        replicas: 1,
        status_reported: false,
        source: None,
        worker: None,
        storage: StorageReport {
            bucket: "s3://celld/new".into(),
            region: Some("us-east-1".into()),
            credentials_secret: Some("creds".into()),
            secret_exists: Some(false),
            ..StorageReport::default()
        },
        rollout: RolloutReport {
            stateful_set: "new".into(),
            spec_observed: false,
            ..RolloutReport::default()
        },
        pods: vec![],
        nodes: vec![],
        capacity: None,
        autoscaling: None,
        conditions: vec![],
        events: vec![],
        warnings: vec![],
    };
    insta::assert_snapshot!(render(&report, now()));
}

fn fleet(ns: &str, name: &str, store: Option<&str>) -> CelldFleet {
    let mut spec = CelldFleetSpec::with_bucket(format!("s3://celld/{name}"));
    match store {
        Some(s) => spec.store_ref = Some(celld_api::StoreRef { name: s.into() }),
        None => {
            spec.object_storage.credentials_secret_ref = Some(celld_api::SecretRef {
                name: "creds".into(),
            });
            spec.object_storage.region = Some("auto".into());
            spec.object_storage.endpoint = Some("https://acct.r2.cloudflarestorage.com".into());
        }
    }
    let mut f = CelldFleet::new(name, spec);
    f.metadata.namespace = Some(ns.into());
    f.metadata.creation_timestamp = at(7200);
    f
}

#[test]
fn fleet_table() {
    let mut web = fleet("apps", "web", Some("minio"));
    web.status = Some(CelldFleetStatus {
        ready_replicas: 1,
        url: Some("http://web.example.com/".into()),
        deployment: Some(DeploymentStatus {
            adopted: None,
            version: "0123456789abcdef".into(),
            ..DeploymentStatus::default()
        }),
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "Serving".into(),
            message: String::new(),
            observed_generation: None,
            last_transition_time: Time(now()),
        }],
        ..CelldFleetStatus::default()
    });
    let api = fleet("edge", "api", None);
    let broken = fleet("apps", "broken", Some("gone"));
    let mut minio = CelldObjectStore::new(
        "minio",
        celld_api::CelldObjectStoreSpec {
            endpoint: Some("http://minio:9000".into()),
            region: None,
            allow_http: Some(true),
            azure_storage_account: None,
            credentials_secret_ref: Some(celld_api::SecretRef { name: "s3".into() }),
        },
    );
    minio.metadata.namespace = Some("apps".into());
    let stores = vec![minio];
    let rows: Vec<list::FleetRow> = [&api, &broken, &web]
        .iter()
        .map(|f| list::row(f, &stores))
        .collect();
    insta::assert_snapshot!(
        "table_all_namespaces",
        list::render(&rows, true, false, now())
    );
    insta::assert_snapshot!(
        "table_one_namespace",
        list::render(&rows[1..], false, false, now())
    );
    insta::assert_snapshot!("table_wide", list::render(&rows[1..], false, true, now()));
    insta::assert_snapshot!("names", list::names(&rows));
    // Typed: the Ready condition as a boolean, absent values omitted, never null.
    let doc = serde_json::to_value(list::FleetList { fleets: rows }).unwrap();
    assert_eq!(doc["fleets"][2]["ready"], serde_json::json!(true));
    assert_eq!(doc["fleets"][0]["ready"], serde_json::json!(false));
    insta::assert_snapshot!("table_json", serde_json::to_string_pretty(&doc).unwrap());
    assert_eq!(
        kubectl_celld::text::jsonpath_template::render(
            r#"{range .fleets[*]}{.namespace}/{.name}{"\t"}{.ready}{"\n"}{end}"#,
            &doc
        )
        .unwrap(),
        "edge/api\tfalse\napps/broken\tfalse\napps/web\ttrue\n"
    );
}

#[test]
fn storage_lines_per_store_and_identity() {
    let report = |bucket: &str, secret: Option<&str>, exists: Option<bool>, sa: Option<&str>| {
        StorageReport {
            store: None,
            bucket: bucket.into(),
            endpoint: None,
            region: bucket.starts_with("s3://").then(|| "eu-west-1".into()),
            azure_storage_account: bucket.starts_with("az://").then(|| "companycelld".into()),
            service_account: sa.map(Into::into),
            credentials_secret: secret.map(Into::into),
            secret_exists: exists,
            error: None,
        }
    };
    let text = [
        report("s3://celld/web", None, None, Some("celld-irsa")),
        report("s3://celld/web", None, None, None),
        report("gs://celld/web", Some("gcs-key"), Some(true), None),
        report("gs://celld/web", None, None, Some("celld-gke")),
        report("az://workers/web", Some("azure-key"), Some(false), None),
        report("az://workers/web", None, None, Some("celld-aks")),
    ]
    .iter()
    .map(storage)
    .collect::<Vec<_>>()
    .join("\n---\n");
    insta::assert_snapshot!(text);
}
