//! The situations of a fleet the queries are evaluated in, as the series Prometheus would hold.

use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The fleet gauges of a fleet with 3 nodes and room to lose one: every node read, with memory
/// headroom, nothing waiting or restoring, 2 GiB resident in all (1 GiB on each of 2 survivors,
/// under 75% of the examples' 2Gi limit).
pub const ROOM: &[(&str, f64)] = &[
    ("celld_operator_fleet_capacity_waiting", 0.0),
    ("celld_operator_fleet_activation_waiting", 0.0),
    ("celld_operator_fleet_restoring", 0.0),
    ("celld_operator_fleet_owned_cells", 40.0),
    ("celld_operator_fleet_resident_cells", 12.0),
    ("celld_operator_fleet_rss_bytes", 2_147_483_648.0),
    ("celld_operator_fleet_nodes_read", 3.0),
    ("celld_operator_fleet_nodes_unreadable", 0.0),
    ("celld_operator_fleet_nodes_pressured", 0.0),
    ("celld_operator_fleet_nodes_without_headroom", 0.0),
    (
        "celld_operator_fleet_capacity_read_timestamp_seconds",
        1_800_000_000.0,
    ),
    ("celld_operator_fleet_scale_paused", 0.0),
    ("celld_operator_fleet_autoscaler_desired_replicas", 3.0),
];

/// One situation of the fleet: the gauges of [`ROOM`] with some changed or missing, whether a
/// replica leads, and the nodes the queries must ask for (None: an empty result).
pub struct Scenario {
    pub name: &'static str,
    pub set: &'static [(&'static str, f64)],
    pub missing: Option<&'static str>,
    pub leader: bool,
    pub desired: Option<f64>,
}

pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "room to lose a node: one fewer",
        set: &[],
        missing: None,
        leader: true,
        desired: Some(2.0),
    },
    Scenario {
        name: "activations wait for capacity: two more",
        set: &[("celld_operator_fleet_capacity_waiting", 4.0)],
        missing: None,
        leader: true,
        desired: Some(5.0),
    },
    Scenario {
        name: "a pressured lease: two more",
        set: &[("celld_operator_fleet_nodes_pressured", 1.0)],
        missing: None,
        leader: true,
        desired: Some(5.0),
    },
    Scenario {
        name: "a node without memory headroom: as many",
        set: &[("celld_operator_fleet_nodes_without_headroom", 1.0)],
        missing: None,
        leader: true,
        desired: Some(3.0),
    },
    Scenario {
        name: "room during a pause: the nodes there are, not fewer",
        set: &[("celld_operator_fleet_scale_paused", 1.0)],
        missing: None,
        leader: true,
        desired: Some(3.0),
    },
    Scenario {
        name: "capacity waiting during a pause: a pause holds scale-in only",
        set: &[
            ("celld_operator_fleet_scale_paused", 1.0),
            ("celld_operator_fleet_capacity_waiting", 2.0),
        ],
        missing: None,
        leader: true,
        desired: Some(5.0),
    },
    Scenario {
        name: "a node unreadable: as many",
        set: &[
            ("celld_operator_fleet_nodes_read", 2.0),
            ("celld_operator_fleet_nodes_unreadable", 1.0),
        ],
        missing: None,
        leader: true,
        desired: Some(3.0),
    },
    Scenario {
        name: "cells restoring: as many",
        set: &[("celld_operator_fleet_restoring", 2.0)],
        missing: None,
        leader: true,
        desired: Some(3.0),
    },
    Scenario {
        name: "survivors could not hold the leaving node's memory: as many",
        set: &[("celld_operator_fleet_rss_bytes", 4_294_967_296.0)],
        missing: None,
        leader: true,
        desired: Some(3.0),
    },
    Scenario {
        name: "no scale_paused series: nothing",
        set: &[],
        missing: Some("celld_operator_fleet_scale_paused"),
        leader: true,
        desired: None,
    },
    Scenario {
        name: "no operator replica leads: nothing",
        set: &[],
        missing: None,
        leader: false,
        desired: None,
    },
];

/// The scraped labels of the leading and the standby operator replica.
pub const LEADER: &str = r#"instance="10.0.0.5:8080",job="celld-operator""#;
pub const STANDBY: &str = r#"instance="10.0.0.6:8080",job="celld-operator""#;

/// The gauges of `scenario` for the leader: [`ROOM`] with its changes, without its missing one.
pub fn gauges(scenario: &Scenario) -> BTreeMap<&'static str, f64> {
    let mut values: BTreeMap<&str, f64> = ROOM.iter().copied().collect();
    values.extend(scenario.set.iter().copied());
    if let Some(missing) = scenario.missing {
        values.remove(missing);
    }
    values
}

/// The series Prometheus holds in `scenario` for the fleet `namespace/fleet`: the leader's
/// gauges, a standby replica's stale ones (which ask for more nodes and pause), another fleet's
/// on the leader, and each replica's `celld_operator_leader`.
pub fn input_series(scenario: &Scenario, namespace: &str, fleet: &str) -> Vec<Value> {
    let series = |name: &str, labels: &str, value: f64| json!({"series": format!("{name}{{{labels}}}"), "values": format!("{value}+0x10")});
    let fleet_labels = |replica: &str, fleet: &str| {
        format!(r#"namespace="{namespace}",fleet="{fleet}",{replica}"#)
    };
    let mut out = Vec::new();
    for (name, value) in gauges(scenario) {
        out.push(series(name, &fleet_labels(LEADER, fleet), value));
    }
    let stale: BTreeMap<&str, f64> = [
        ("celld_operator_fleet_nodes_read", 7.0),
        ("celld_operator_fleet_capacity_waiting", 9.0),
        ("celld_operator_fleet_scale_paused", 1.0),
    ]
    .into_iter()
    .collect();
    for &(name, room) in ROOM {
        let value = stale.get(name).copied().unwrap_or(room);
        out.push(series(name, &fleet_labels(STANDBY, fleet), value));
        let other = if name == "celld_operator_fleet_nodes_read" {
            10.0
        } else {
            room
        };
        out.push(series(name, &fleet_labels(LEADER, "another"), other));
    }
    let leads = if scenario.leader { 1.0 } else { 0.0 };
    let operator = |replica: &str| format!(r#"{replica},namespace="celld-system""#);
    out.push(series("celld_operator_leader", &operator(LEADER), leads));
    out.push(series("celld_operator_leader", &operator(STANDBY), 0.0));
    out
}

/// One expression checked at 5 minutes: its single label-less sample, or no sample.
pub fn expect(expr: &str, value: Option<f64>) -> Value {
    let samples = match value {
        Some(v) => json!([{"labels": "{}", "value": v}]),
        None => json!([]),
    };
    json!({"expr": expr, "eval_time": "5m", "exp_samples": samples})
}

/// The tests of `query` (for the fleet `namespace/fleet`) in every scenario.
pub fn scenario_tests(query: &str, namespace: &str, fleet: &str) -> Vec<Value> {
    SCENARIOS
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "interval": "1m",
                "input_series": input_series(s, namespace, fleet),
                "promql_expr_test": [expect(query, s.desired)],
            })
        })
        .collect()
}
