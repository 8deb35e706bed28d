//! The S3 server stops under Ready fleets: they must say the bucket is unreadable
//! (Deployed=Unknown, BucketUnreadable) and keep their nodes, then recover once it is back. On a
//! private control plane, so the shared S3 server other tests use never stops. One fleet whose
//! bucket cannot be read, with the operator in the test process: operator/unreadable_bucket.rs.

use crate::cluster::{Cluster, Tuning};
use crate::conditions::{has, typed_summary};
use crate::fixtures::{apply, publish_pointer};
use crate::leaks;
use crate::sentinels::Sentinels;
use crate::timing::{measured, median_max, seconds, until_each};
use celld_api::CelldFleet;
use celld_fixtures::manifests::{fleet_manifest, inline_spec, merge, store_manifest, store_spec};
use celld_testkit::faults::{PrivateControlPlane, ReportSection};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Fleets under the outage: half inline, half through a store.
const FLEETS: usize = 8;

/// Nodes per fleet.
const REPLICAS: i32 = 2;

/// How long the outage lasts once every fleet noticed it.
const HOLD: Duration = Duration::from_secs(10);

/// Bound for noticing the outage and for recovering from it.
const BOUND: Duration = Duration::from_secs(60);

/// Replicas of every StatefulSet and the uid of every pod.
async fn nodes(client: &Client, ns: &str) -> (BTreeMap<String, i32>, BTreeMap<String, String>) {
    let sets = Api::<StatefulSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("StatefulSets listed");
    let pods = Api::<Pod>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("pods listed");
    (
        sets.items
            .iter()
            .map(|s| {
                let replicas = s.spec.as_ref().and_then(|s| s.replicas).unwrap_or(-1);
                (s.name_any(), replicas)
            })
            .collect(),
        pods.items
            .iter()
            .map(|p| (p.name_any(), p.uid().unwrap_or_default()))
            .collect(),
    )
}

#[tokio::test]
async fn fleets_keep_their_nodes_through_an_s3_outage_and_recover() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testenv-resilience");
    let plane = PrivateControlPlane::start(&dir)
        .await
        .expect("a private control plane for the S3 outage (needs `make testenv`)");
    let cluster = Cluster::private(&plane).await;
    let client = &cluster.client;
    let namespace = cluster.namespace("resilience-s3-outage").await;
    let ns = namespace.name();
    let mut sentinels = Sentinels::default();
    sentinels
        .working_secret(client, ns, "creds", &cluster.s3)
        .await;
    apply(client, ns, &store_manifest("store", &cluster.s3, "creds"))
        .await
        .expect("store applied");
    let prefix = cluster.s3.unique_prefix("resilience-s3-outage");
    let prefix = prefix.trim_end_matches('/');
    let mut names = Vec::new();
    for i in 0..FLEETS {
        let name = format!("fleet-{i}");
        let fleet_prefix = format!("{prefix}/{name}");
        publish_pointer(&cluster.s3, &fleet_prefix, "0123456789abcdef").await;
        let mut spec = if i % 2 == 0 {
            inline_spec(&cluster.s3, &fleet_prefix, "creds", 1)
        } else {
            store_spec(&cluster.s3, &fleet_prefix, "store", 1)
        };
        merge(&mut spec, json!({"replicas": REPLICAS}));
        apply(client, ns, &fleet_manifest(&name, spec))
            .await
            .unwrap_or_else(|e| panic!("fleet {name} applied: {e}"));
        names.push(name);
    }
    let tuning = Tuning {
        resync: 5,
        pending_resync: 2,
    };
    let mut operator = cluster.operator(Some(ns), tuning).await;
    until_each(
        client,
        ns,
        &names,
        "fleets Ready before the outage",
        Instant::now(),
        Duration::from_secs(90),
        |f| has(f, "Ready", "True", None),
    )
    .await;
    let (replicas_before, pods_before) = nodes(client, ns).await;
    assert_eq!(
        pods_before.len(),
        FLEETS * REPLICAS as usize,
        "every node runs"
    );

    plane
        .stop_component("s3s-fs", "TERM")
        .await
        .expect("the S3 server stopped");
    let stopped = Instant::now();
    let noticed = until_each(
        client,
        ns,
        &names,
        "fleets report the unreadable bucket",
        stopped,
        BOUND,
        |f| has(f, "Deployed", "Unknown", Some("BucketUnreadable")),
    )
    .await;
    let mut changes = Vec::new();
    let mut during = String::new();
    let hold_until = Instant::now() + HOLD;
    while Instant::now() < hold_until {
        let (replicas, pods) = nodes(client, ns).await;
        if replicas != replicas_before {
            changes.push(format!(
                "StatefulSet replicas {replicas_before:?} became {replicas:?}"
            ));
        }
        if pods != pods_before {
            changes.push(format!("pods {pods_before:?} became {pods:?}"));
        }
        let fleet = Api::<CelldFleet>::namespaced(client.clone(), ns)
            .get(&names[0])
            .await
            .expect("a fleet");
        during = typed_summary(&fleet);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let outage = stopped.elapsed();

    plane
        .start_component("s3s-fs")
        .await
        .expect("the S3 server started again");
    let started = Instant::now();
    let recovered = until_each(
        client,
        ns,
        &names,
        "fleets recover once the S3 server is back",
        started,
        BOUND,
        |f| has(f, "Deployed", "True", None) && has(f, "Ready", "True", None),
    )
    .await;

    assert!(
        operator.is_running(),
        "the operator process exited during the outage"
    );
    let panics = operator.panics().expect("the operator log");
    let scan = leaks::scan(&cluster, &[ns], &[operator.log_path()], sentinels.values()).await;

    let mut section = ReportSection::new("30-s3-outage", "S3 server outage under Ready fleets");
    section
        .paragraph(measured("s3_outage"))
        .paragraph(format!(
            "{FLEETS} Ready fleets ({REPLICAS} nodes each; half inline, half through a CelldObjectStore) on a private control plane. Its S3 server is stopped (SIGTERM), kept down {} after every fleet noticed, then started again exactly as up.sh started it. The operator reads each pointer every {} s while it is readable and every {} s while it is not, each read bounded by 2 s.",
            seconds(HOLD),
            tuning.resync,
            tuning.pending_resync
        ))
        .table(
            &["fleets", "Deployed=Unknown/BucketUnreadable after (median / max)", "outage", "nodes kept (replicas, pods)", "conditions of a fleet during the outage", "recovered after the restart (median / max)"],
            &[vec![
                FLEETS.to_string(),
                median_max(noticed.values().copied()),
                seconds(outage),
                if changes.is_empty() { "yes".to_string() } else { format!("no: {}", changes.len()) },
                during.clone(),
                median_max(recovered.values().copied()),
            ]],
        )
        .bullets(&[
            format!("Operator panics: {}", panics.len()),
            format!(
                "Credential values found outside their Secret: {} (searched {})",
                scan.findings.len(),
                scan.summary()
            ),
        ]);
    section.write().expect("the report section written");

    assert!(
        changes.is_empty(),
        "the fleets lost or replaced nodes during the S3 outage:\n{}",
        changes.join("\n")
    );
    assert!(
        panics.is_empty(),
        "the operator panicked:\n{}",
        panics.join("\n")
    );
    scan.assert_clean("S3 outage");
    drop(operator);
    namespace.cleanup().await.expect("namespace deleted");
    plane
        .stop()
        .await
        .expect("the private control plane stopped");
}
