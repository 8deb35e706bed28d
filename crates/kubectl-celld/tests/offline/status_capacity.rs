//! `status FLEET` of fleets whose nodes reported their capacity: the nodes' table with its
//! total, when it was read, an unreadable node's error, the signals a celld v0.4 fleet does not
//! report, and the autoscaler's block; in text and in `-o json` (snapshots). A fleet without
//! status.capacity and spec.autoscaling shows neither.

use crate::capacity_fixtures::{legacy, unread, web};
use crate::status_render::{at, now};
use celld_api::CelldFleet;
use kubectl_celld::commands::status::capacity;
use kubectl_celld::commands::status::render::render;
use kubectl_celld::commands::status::report::{
    ConditionReport, FleetReport, RolloutReport, StorageReport,
};

/// The report `gather` builds from `fleet`, with what it reads elsewhere fixed.
fn report(fleet: &CelldFleet) -> FleetReport {
    let status = fleet.status.as_ref();
    let conditions: Vec<ConditionReport> = status
        .map(|s| {
            s.conditions
                .iter()
                .map(|c| ConditionReport {
                    type_: c.type_.clone(),
                    status: c.status.clone(),
                    reason: c.reason.clone(),
                    message: c.message.clone(),
                    last_transition_time: Some(c.last_transition_time.clone()),
                })
                .collect()
        })
        .unwrap_or_default();
    let name = fleet.metadata.name.clone().unwrap();
    FleetReport {
        namespace: "apps".into(),
        created: at(86_400),
        url: None,
        image: "ghcr.io/denoland/celld:v0.6.0".into(),
        replicas: fleet.spec.replicas,
        status_reported: status.is_some(),
        source: None,
        worker: None,
        storage: StorageReport {
            bucket: format!("s3://celld/{name}"),
            region: Some("us-east-1".into()),
            credentials_secret: Some("creds".into()),
            secret_exists: Some(true),
            ..StorageReport::default()
        },
        rollout: RolloutReport {
            stateful_set: name.clone(),
            found: true,
            replicas: status.map_or(0, |s| s.replicas),
            ready_replicas: status.map_or(0, |s| s.ready_replicas),
            updated_replicas: status.map_or(0, |s| s.updated_replicas),
            spec_observed: true,
            ..RolloutReport::default()
        },
        pods: vec![],
        nodes: vec![],
        capacity: status.and_then(|s| s.capacity.clone()),
        autoscaling: capacity::report(fleet, &conditions),
        conditions,
        events: vec![],
        warnings: vec![],
        name,
    }
}

/// The lines of `text` from the one starting with `from` to the one before `to`.
fn section<'a>(text: &'a str, from: &str, to: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(from))
        .take_while(|l| !l.starts_with(to))
        .collect()
}

#[test]
fn autoscaled_fleet_with_an_unreadable_node() {
    let report = report(&web());
    let text = render(&report, now());
    insta::assert_snapshot!(text);

    // The table: a row per node in ordinal order, then the total; the unreadable node's error.
    let table = section(&text, "Capacity:", "Autoscaling:");
    let rows: Vec<&str> = table
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(rows, ["NAME", "web-0", "web-1", "web-2", "TOTAL"], "{text}");
    let total = table.last().unwrap();
    for cell in ["2000", "75", "3", "1/2", "2.6 GiB"] {
        assert!(
            total.split("   ").any(|c| c.trim() == cell),
            "no {cell:?} in {total:?}"
        );
    }
    let web2 = table.iter().find(|l| l.starts_with("  web-2 ")).unwrap();
    assert!(
        web2.ends_with("GET http://web-2.web-peers.apps.svc:8081/state: connection refused"),
        "{text}"
    );
    assert!(
        text.contains("Capacity:    read 45s ago from 2 of 3 nodes (1 unreadable)\n"),
        "{text}"
    );
    assert!(
        text.contains("Autoscaling: 2 to 6 nodes; desired 4, current 3\n"),
        "{text}"
    );
    assert!(
        text.contains("last scale:   2 to 3 nodes 10m ago, CapacityWaiting: web-0 reported 5"),
        "{text}"
    );
    assert!(
        text.contains("holding:      Cooldown: the node added"),
        "{text}"
    );
    assert!(
        text.contains("IdleEviction: False IdleEvictionUnset: spec.env does not set"),
        "{text}"
    );

    let json = serde_json::to_string_pretty(&report).unwrap();
    insta::assert_snapshot!("autoscaled_fleet_with_an_unreadable_node_json", json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["capacity"]["total"]["capacityWaiting"], 3);
    assert_eq!(doc["capacity"]["nodes"][2]["name"], "web-2");
    assert!(doc["capacity"]["nodes"][2]["error"].is_string());
    assert!(doc["capacity"]["nodes"][2].get("ownedCells").is_none());
    assert_eq!(doc["autoscaling"]["minReplicas"], 2);
    assert_eq!(doc["autoscaling"]["maxReplicas"], 6);
    assert_eq!(doc["autoscaling"]["scaleUp"]["maxNodesPerStep"], 2);
    assert_eq!(doc["autoscaling"]["desiredReplicas"], 4);
    assert_eq!(
        doc["autoscaling"]["lastDecision"]["reason"],
        "CapacityWaiting"
    );
    assert_eq!(doc["autoscaling"]["holding"]["reason"], "Cooldown");
    assert_eq!(
        doc["autoscaling"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["Autoscaling", "IdleEviction"]
    );
}

/// celld v0.4 reports restores, resident cells and memory only: the rest shows `-` and is
/// named, never shown as 0.
#[test]
fn celld_v04_fleet_names_what_it_does_not_report() {
    let report = report(&legacy());
    let text = render(&report, now());
    let capacity = section(&text, "Capacity:", "Conditions:").join("\n");
    insta::assert_snapshot!(capacity);
    assert!(
        capacity.contains(
            "not reported by the nodes' celld release: ownedCells, capacityWaiting, activationWaiting, pressured, memoryHeadroom"
        ),
        "{capacity}"
    );
    let total = capacity.lines().last().unwrap();
    let cells: Vec<&str> = total
        .split("   ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells,
        ["TOTAL", "-", "21", "-", "-", "1", "-", "-", "550.0 MiB"],
        "{capacity}"
    );
    assert!(
        !text.contains("Autoscaling:"),
        "no spec.autoscaling:\n{text}"
    );
    let doc = serde_json::to_value(&report).unwrap();
    assert_eq!(doc["capacity"]["unreported"][1], "capacityWaiting");
    assert!(doc["capacity"]["total"].get("capacityWaiting").is_none());
    assert!(doc.get("autoscaling").is_none());
}

/// Without status.capacity and spec.autoscaling nothing new is shown: no empty sections.
#[test]
fn fleet_without_capacity_shows_no_capacity_section() {
    let report = report(&unread());
    let text = render(&report, now());
    for absent in ["Capacity", "Autoscaling", "TOTAL", "spec.autoscaling"] {
        assert!(!text.contains(absent), "{absent:?} in\n{text}");
    }
    let doc = serde_json::to_value(&report).unwrap();
    assert!(doc.get("capacity").is_none(), "{doc}");
    assert!(doc.get("autoscaling").is_none(), "{doc}");
}

/// An autoscaled fleet the operator has not decided for yet: the bounds, and conditions that
/// say why.
#[test]
fn autoscaled_fleet_before_a_decision() {
    let mut fleet = unread();
    fleet.spec.autoscaling = Some(celld_api::Autoscaling::between(1, 3));
    fleet.status.as_mut().unwrap().conditions = vec![celld_api::conditions::make(
        &[],
        celld_api::conditions::AUTOSCALING,
        Some(false),
        "SignalsUnsupported",
        "celld v0.4.0 reports no capacity signals: upgrade to v0.5.0 or later",
        Some(1),
        now(),
    )];
    let report = report(&fleet);
    let text = render(&report, now());
    assert!(
        text.contains(
            "Autoscaling: 1 to 3 nodes; no decision reported yet\n             Autoscaling:  False SignalsUnsupported: celld v0.4.0 reports no capacity signals"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "Replicas:    1 (where the fleet starts: spec.autoscaling sets the number of nodes)"
        ),
        "{text}"
    );
    assert!(!text.contains("Capacity:"), "{text}");
}
