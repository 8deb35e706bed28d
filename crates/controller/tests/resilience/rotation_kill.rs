//! A Secret shared by many fleets (directly and through a store) is rotated, and the operator
//! is SIGKILLed about a second later, in the middle of rolling the fleets onto it. Once it is
//! started again, every StatefulSet must carry the configuration hash of the new Secret. A
//! rotation without a kill, with the operator in the test process: operator/storage.rs.

use crate::cluster::{Cluster, Tuning};
use crate::conditions::has;
use crate::fixtures::{apply, publish_pointer};
use crate::leaks;
use crate::sentinels::Sentinels;
use crate::timing::{measured, median_max, seconds, until_each};
use celld_api::{CelldFleet, labels};
use celld_fixtures::manifests::{fleet_manifest, inline_spec, store_manifest, store_spec};
use celld_testkit::faults::ReportSection;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Secret;
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Fleets sharing the Secret: half name it, half use a store that names it.
const FLEETS: usize = 40;

/// How long after the rotation the operator is killed.
const KILL_AFTER: Duration = Duration::from_secs(1);

/// How long every StatefulSet may take to carry the new hash once the operator is back.
const CONVERGE_BOUND: Duration = Duration::from_secs(60);

/// The hash the operator must put on each fleet's pod template for `secret`.
async fn expected_hashes(
    client: &Client,
    ns: &str,
    names: &[String],
    secret: &Secret,
) -> BTreeMap<String, String> {
    let fleets: Api<CelldFleet> = Api::namespaced(client.clone(), ns);
    let mut hashes = BTreeMap::new();
    for name in names {
        let fleet = fleets.get(name).await.expect("the fleet");
        let storage = celld_api::resolve::fetch(client, ns, &fleet.spec)
            .await
            .expect("the fleet's storage resolves");
        hashes.insert(
            name.clone(),
            celld_operator::fleet::config_hash::compute(&storage, Some(secret)),
        );
    }
    hashes
}

/// The configuration hash on each StatefulSet's pod template.
async fn live_hashes(client: &Client, ns: &str) -> BTreeMap<String, String> {
    let list = Api::<StatefulSet>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("StatefulSets listed");
    list.items
        .iter()
        .map(|s| {
            let hash = s
                .spec
                .as_ref()
                .and_then(|spec| spec.template.metadata.as_ref())
                .and_then(|m| m.annotations.as_ref())
                .and_then(|a| a.get(labels::CONFIG_HASH))
                .cloned()
                .unwrap_or_default();
            (s.name_any(), hash)
        })
        .collect()
}

fn matching(live: &BTreeMap<String, String>, want: &BTreeMap<String, String>) -> usize {
    want.iter().filter(|(n, h)| live.get(*n) == Some(h)).count()
}

#[tokio::test]
async fn a_secret_rotated_just_before_the_operator_is_killed_reaches_every_fleet() {
    let cluster = Cluster::shared().await;
    let client = &cluster.client;
    let namespace = cluster.namespace("resilience-rotation").await;
    let ns = namespace.name();
    let mut sentinels = Sentinels::default();
    let before = sentinels
        .working_secret(client, ns, "shared-creds", &cluster.s3)
        .await;
    apply(
        client,
        ns,
        &store_manifest("shared-store", &cluster.s3, "shared-creds"),
    )
    .await
    .expect("store applied");
    let prefix = cluster.s3.unique_prefix("resilience-rotation");
    let prefix = prefix.trim_end_matches('/');
    let mut names = Vec::new();
    for i in 0..FLEETS {
        let name = format!("fleet-{i:02}");
        let fleet_prefix = format!("{prefix}/{name}");
        publish_pointer(&cluster.s3, &fleet_prefix, "0123456789abcdef").await;
        let spec = if i % 2 == 0 {
            inline_spec(&cluster.s3, &fleet_prefix, "shared-creds", 1)
        } else {
            store_spec(&cluster.s3, &fleet_prefix, "shared-store", 1)
        };
        apply(client, ns, &fleet_manifest(&name, spec))
            .await
            .unwrap_or_else(|e| panic!("fleet {name} applied: {e}"));
        names.push(name);
    }
    let tuning = Tuning {
        resync: 600,
        pending_resync: 600,
    };
    let mut operator = cluster.operator(Some(ns), tuning).await;
    until_each(
        client,
        ns,
        &names,
        "fleets Ready before the rotation",
        Instant::now(),
        Duration::from_secs(120),
        |f| has(f, "Ready", "True", None),
    )
    .await;
    let old = expected_hashes(client, ns, &names, &before).await;
    assert_eq!(
        matching(&live_hashes(client, ns).await, &old),
        FLEETS,
        "before the rotation every StatefulSet carries the hash of the Secret as it is"
    );

    let after = sentinels
        .working_secret(client, ns, "shared-creds", &cluster.s3)
        .await;
    let rotated = Instant::now();
    let new = expected_hashes(client, ns, &names, &after).await;
    assert!(
        new.iter().all(|(n, h)| old.get(n) != Some(h)),
        "the rotation changes every fleet's hash"
    );
    tokio::time::sleep(KILL_AFTER.saturating_sub(rotated.elapsed())).await;
    let killed_after = rotated.elapsed();
    operator.kill().await.expect("the operator SIGKILLed");
    let rolled_before_kill = matching(&live_hashes(client, ns).await, &new);
    operator
        .restart()
        .await
        .expect("the operator started again");
    let restarted = Instant::now();

    let mut converged = BTreeMap::new();
    let mut last_seen = BTreeMap::new();
    while converged.len() < FLEETS && restarted.elapsed() < CONVERGE_BOUND {
        last_seen = live_hashes(client, ns).await;
        for (name, hash) in &new {
            if !converged.contains_key(name) && last_seen.get(name) == Some(hash) {
                converged.insert(name.clone(), rotated.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let stale: Vec<String> = new
        .iter()
        .filter(|(n, _)| !converged.contains_key(*n))
        .map(|(n, h)| format!("{n}: {:?} (want {h})", last_seen.get(n)))
        .collect();
    let all_converged = stale.is_empty();
    let ready_again = if all_converged {
        let ready = until_each(
            client,
            ns,
            &names,
            "fleets Ready on the rotated Secret",
            rotated,
            Duration::from_secs(120),
            |f| has(f, "Ready", "True", None),
        )
        .await;
        ready.values().max().copied()
    } else {
        None
    };

    assert!(
        operator.is_running(),
        "the restarted operator process exited"
    );
    let panics = operator.panics().expect("the operator log");
    let scan = leaks::scan(&cluster, &[ns], &[operator.log_path()], sentinels.values()).await;

    let mut section = ReportSection::new(
        "40-secret-rotation-sigkill",
        "Operator SIGKILL during a Secret rotation",
    );
    section
        .paragraph(measured("rotation_kill"))
        .paragraph(format!(
            "{FLEETS} Ready fleets (1 node each) share one credentials Secret: half name it, half use a CelldObjectStore that names it. The Secret is rotated (a new session token: the test S3 server has one key pair, so the pair stays), the operator is SIGKILLed {} later and started again at once. Bound for every StatefulSet to carry the new configuration hash: {} after the restart.",
            seconds(killed_after),
            seconds(CONVERGE_BOUND)
        ))
        .table(
            &["fleets", "on the new hash when killed", "all on the new hash after the rotation", "per fleet (median / max)", "all Ready again after", "stale at the bound"],
            &[vec![
                FLEETS.to_string(),
                rolled_before_kill.to_string(),
                converged.values().max().map_or("-".into(), |d| seconds(*d)),
                median_max(converged.values().copied()),
                ready_again.map_or("-".into(), seconds),
                stale.len().to_string(),
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
        all_converged,
        "{} StatefulSets still lack the rotated Secret's hash {CONVERGE_BOUND:?} after the operator restarted: {}\noperator log: {}",
        stale.len(),
        stale.join("; "),
        operator.log_path().display()
    );
    assert!(
        panics.is_empty(),
        "the operator panicked:\n{}",
        panics.join("\n")
    );
    scan.assert_clean("Secret rotation with SIGKILL");
    namespace.cleanup().await.expect("namespace deleted");
}
