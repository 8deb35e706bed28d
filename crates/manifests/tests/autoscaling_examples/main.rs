//! The autoscaling examples, checked by the code that runs them (`dry_run` checks their objects
//! against the API server; this checks what they compute):
//!
//! - `examples/autoscaling-prometheus-adapter.yaml`: the adapter configuration in its ConfigMap
//!   is read by prometheus-adapter's own loader and rule namers (`adapter-config`, built from
//!   `sigs.k8s.io/prometheus-adapter` by `make testenv`), which also build the query the adapter
//!   would send to Prometheus for the example's HorizontalPodAutoscaler.
//! - That query and the PromQL of `examples/autoscaling-keda.yaml`'s ScaledObject are evaluated
//!   by Prometheus's own engine (`promtool test rules`) on the operator's fleet gauges in each
//!   situation of [`SCENARIOS`]: more nodes on a capacity or pressure signal, one fewer only when
//!   the fleet has room, the current count during a pause (never nothing, which would read as 0),
//!   nothing at all (an error the HPA answers by holding) when a series or the leader is
//!   missing, and only the leading operator replica's series counted.
//! - Every metric name the queries and series queries use is one the operator exports
//!   ([`FLEET_GAUGES`], [`OTHER_METRICS`]); the ScaledObject and the HPA target a CelldFleet,
//!   with an AverageValue target of 1 (the query is the number of nodes), a scale-in of one
//!   node per period after a long stabilization and a tolerance that lets a one-node step
//!   through; and no example fleet with spec.autoscaling is the target of either.
//!
//! Needs `.testenv/bin/promtool` and `.testenv/bin/adapter-config` (`make cluster-up` links
//! them), not a running control plane.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers, outside #[test] functions

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const KEDA: &str = "examples/autoscaling-keda.yaml";
const ADAPTER: &str = "examples/autoscaling-prometheus-adapter.yaml";

/// The operator's fleet gauges (docs/autoscaling.md), labelled `namespace` and `fleet`.
const FLEET_GAUGES: &[&str] = &[
    "celld_operator_fleet_capacity_waiting",
    "celld_operator_fleet_activation_waiting",
    "celld_operator_fleet_restoring",
    "celld_operator_fleet_owned_cells",
    "celld_operator_fleet_resident_cells",
    "celld_operator_fleet_rss_bytes",
    "celld_operator_fleet_nodes_read",
    "celld_operator_fleet_nodes_unreadable",
    "celld_operator_fleet_nodes_pressured",
    "celld_operator_fleet_nodes_without_headroom",
    "celld_operator_fleet_capacity_read_timestamp_seconds",
    "celld_operator_fleet_scale_paused",
    "celld_operator_fleet_autoscaler_desired_replicas",
];

/// The operator's other metrics a query may use.
const OTHER_METRICS: &[&str] = &[
    "celld_operator_leader",
    "celld_operator_autoscaler_decisions_total",
    "celld_operator_node_state_reads_total",
];

/// The fleet gauges of a fleet with 3 nodes and room to lose one: every node read, with memory
/// headroom, nothing waiting or restoring, 2 GiB resident in all (1 GiB on each of 2 survivors,
/// under 75% of the examples' 2Gi limit).
const ROOM: &[(&str, f64)] = &[
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
struct Scenario {
    name: &'static str,
    set: &'static [(&'static str, f64)],
    missing: Option<&'static str>,
    leader: bool,
    desired: Option<f64>,
}

const SCENARIOS: &[Scenario] = &[
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
const LEADER: &str = r#"instance="10.0.0.5:8080",job="celld-operator""#;
const STANDBY: &str = r#"instance="10.0.0.6:8080",job="celld-operator""#;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The non-empty YAML documents of a repository file, as JSON values.
fn documents(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).unwrap_or_else(|e| panic!("{file}: {e}")))
        .filter(|doc: &Value| !doc.is_null())
        .collect()
}

/// The one document of `kind` in `file`.
fn document(file: &str, kind: &str) -> Value {
    let mut docs: Vec<Value> = documents(file)
        .into_iter()
        .filter(|d| d["kind"] == kind)
        .collect();
    assert_eq!(docs.len(), 1, "{file} has one {kind}");
    docs.remove(0)
}

/// A tool of the local control plane: its path, or a panic saying how to get it.
fn tool(path: PathBuf, component: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: build and link it with `make cluster-up` (testenv/scripts/build.sh {component})",
        path.display()
    );
    path
}

/// Runs `tool ARGS` with `input` on stdin: its exit status, stdout and stderr.
fn run(tool: &Path, args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} runs: {e}", tool.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The names a PromQL text uses that start like the operator's (`celld_operator_`), each with
/// whether a regular expression continues it (`celld_operator_fleet_.+`: a prefix).
fn operator_names(text: &str) -> Vec<(String, bool)> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("celld_operator_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let prefix = tail[end..].starts_with('.');
        names.push((tail[..end].to_owned(), prefix));
        rest = &tail[end..];
    }
    names
}

/// Fails naming every name in `text` that is not one of the operator's metrics (nor, for a
/// regular expression, the start of one); returns how many names it checked.
fn assert_known_names(what: &str, text: &str) -> usize {
    let known: Vec<&str> = FLEET_GAUGES.iter().chain(OTHER_METRICS).copied().collect();
    let names = operator_names(text);
    let unknown: Vec<&String> = names
        .iter()
        .filter(|(name, prefix)| {
            !known
                .iter()
                .any(|k| *k == name || (*prefix && k.starts_with(name.as_str())))
        })
        .map(|(name, _)| name)
        .collect();
    assert!(
        unknown.is_empty(),
        "{what} uses {unknown:?}, which the operator does not export (it exports {known:?}):\n{text}"
    );
    names.len()
}

/// The gauges of `scenario` for the leader: [`ROOM`] with its changes, without its missing one.
fn gauges(scenario: &Scenario) -> BTreeMap<&'static str, f64> {
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
fn input_series(scenario: &Scenario, namespace: &str, fleet: &str) -> Vec<Value> {
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
fn expect(expr: &str, value: Option<f64>) -> Value {
    let samples = match value {
        Some(v) => json!([{"labels": "{}", "value": v}]),
        None => json!([]),
    };
    json!({"expr": expr, "eval_time": "5m", "exp_samples": samples})
}

/// Runs `promtool test rules` on the given test groups; fails with its report.
fn promtool_test(what: &str, tests: Vec<Value>) {
    let promtool = tool(celld_testkit::paths::promtool(), "promtool");
    let dir = std::env::temp_dir().join(celld_testkit::unique_name("autoscaling-examples"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tests.yaml");
    let doc = json!({"evaluation_interval": "1m", "tests": tests});
    std::fs::write(&file, serde_yaml::to_string(&doc).unwrap()).unwrap();
    let (ok, stdout, stderr) = run(&promtool, &["test", "rules", file.to_str().unwrap()], "");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(ok, "{what}: promtool test rules failed:\n{stdout}{stderr}");
}

/// The tests of `query` (for the fleet `namespace/fleet`) in every scenario.
fn scenario_tests(query: &str, namespace: &str, fleet: &str) -> Vec<Value> {
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

/// Asserts a HorizontalPodAutoscaler's behavior (autoscaling/v2, also KEDA's
/// advanced.horizontalPodAutoscalerConfig.behavior) removes one node per period, after a
/// stabilization window of 5 minutes or more, and that its tolerance lets a one-node step
/// through up to `max` nodes (the HPA ignores a desired count within the tolerance of the
/// current one: 10% by default, one node among more than 10).
fn assert_slow_scale_in(what: &str, behavior: &Value, max: i64) {
    for direction in ["scaleUp", "scaleDown"] {
        let tolerance: f64 = behavior[direction]["tolerance"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0.1);
        assert!(
            tolerance * (max as f64) < 1.0,
            "{what}: {direction}.tolerance {tolerance} hides a one-node step at {max} nodes"
        );
    }
    let down = &behavior["scaleDown"];
    let window = down["stabilizationWindowSeconds"].as_i64().unwrap_or(0);
    assert!(
        window >= 300,
        "{what}: scaleDown.stabilizationWindowSeconds {window}, less than 300"
    );
    let policies = down["policies"].as_array().cloned().unwrap_or_default();
    assert!(!policies.is_empty(), "{what}: no scaleDown policy");
    for p in &policies {
        assert!(
            p["type"] == "Pods" && p["value"] == 1,
            "{what}: a scaleDown policy that removes more than one node per period: {p}"
        );
    }
}

/// Asserts `target` is a CelldFleet's scale subresource.
fn assert_targets_a_fleet(what: &str, target: &Value) {
    assert_eq!(
        (&target["apiVersion"], &target["kind"]),
        (&json!("platform.celld.dev/v1alpha1"), &json!("CelldFleet")),
        "{what}: scaleTargetRef"
    );
}

/// The fleets named by every ScaledObject and HorizontalPodAutoscaler under examples/.
fn scaled_fleets(docs: &[Value]) -> Vec<String> {
    docs.iter()
        .filter(|d| d["kind"] == "ScaledObject" || d["kind"] == "HorizontalPodAutoscaler")
        .filter(|d| d["spec"]["scaleTargetRef"]["kind"] == "CelldFleet")
        .filter_map(|d| {
            d["spec"]["scaleTargetRef"]["name"]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn the_keda_query_asks_for_the_nodes_celld_needs_and_never_for_fewer_during_a_pause() {
    let scaled = document(KEDA, "ScaledObject");
    assert_targets_a_fleet(KEDA, &scaled["spec"]["scaleTargetRef"]);
    let triggers = scaled["spec"]["triggers"].as_array().unwrap();
    assert_eq!(triggers.len(), 1, "{KEDA}: one trigger");
    let trigger = &triggers[0];
    assert_eq!(trigger["type"], "prometheus");
    assert_eq!(trigger["metricType"], "AverageValue");
    let meta = &trigger["metadata"];
    assert_eq!(meta["threshold"], "1", "the query is the number of nodes");
    assert_eq!(
        meta["ignoreNullValues"], "false",
        "an empty result must be an error, not 0 nodes"
    );
    assert_slow_scale_in(
        KEDA,
        &scaled["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"],
        scaled["spec"]["maxReplicaCount"].as_i64().unwrap(),
    );
    let query = meta["query"].as_str().unwrap();
    assert!(
        assert_known_names(KEDA, query) > 0,
        "{KEDA} queries nothing"
    );

    let namespace = scaled["metadata"]["namespace"].as_str().unwrap();
    let fleet = scaled["spec"]["scaleTargetRef"]["name"].as_str().unwrap();
    promtool_test(KEDA, scenario_tests(query, namespace, fleet));
}

#[test]
fn the_adapter_serves_the_same_desired_nodes_and_every_fleet_gauge() {
    let adapter_config = tool(celld_testkit::paths::adapter_config(), "adapter-config");
    let config_map = document(ADAPTER, "ConfigMap");
    let config = config_map["data"]["config.yaml"].as_str().unwrap();
    let hpa = document(ADAPTER, "HorizontalPodAutoscaler");
    assert_targets_a_fleet(ADAPTER, &hpa["spec"]["scaleTargetRef"]);
    assert_slow_scale_in(
        ADAPTER,
        &hpa["spec"]["behavior"],
        hpa["spec"]["maxReplicas"].as_i64().unwrap(),
    );
    let metrics = hpa["spec"]["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 1, "{ADAPTER}: the HPA reads one metric");
    let external = &metrics[0]["external"];
    assert_eq!(
        external["target"],
        json!({"type": "AverageValue", "averageValue": "1"}),
        "the metric is the number of nodes"
    );
    let wanted = external["metric"]["name"].as_str().unwrap();
    let labels = external["metric"]["selector"]["matchLabels"]
        .as_object()
        .unwrap();
    let selector: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
        .collect();
    let namespace = hpa["metadata"]["namespace"].as_str().unwrap();
    let fleet = labels["fleet"].as_str().unwrap();
    assert_eq!(fleet, hpa["spec"]["scaleTargetRef"]["name"]);

    // The adapter's own loader and namers, over every metric name Prometheus could list.
    let mut args = vec![namespace.to_owned(), selector.join(",")];
    args.extend(
        FLEET_GAUGES
            .iter()
            .chain(OTHER_METRICS)
            .map(|s| s.to_string()),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, stdout, stderr) = run(&adapter_config, &args, config);
    assert!(
        ok,
        "prometheus-adapter refuses the configuration of {ADAPTER}:\n{stderr}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let mut served = BTreeMap::new();
    for rule in report["externalRules"].as_array().unwrap() {
        let series_query = rule["seriesQuery"].as_str().unwrap();
        assert_known_names(&format!("{ADAPTER}: seriesQuery"), series_query);
        for m in rule["metrics"].as_array().unwrap() {
            let query = m["query"].as_str().unwrap().to_owned();
            assert_known_names(&format!("{ADAPTER}: the query of {}", m["metric"]), &query);
            let previous = served.insert(
                m["metric"].as_str().unwrap().to_owned(),
                (m["series"].as_str().unwrap().to_owned(), query),
            );
            assert!(previous.is_none(), "two rules serve {}", m["metric"]);
        }
    }
    let (_, desired) = served
        .get(wanted)
        .unwrap_or_else(|| panic!("the adapter serves no {wanted}; it serves {served:?}"));
    let mut tests = scenario_tests(desired, namespace, fleet);

    // Each fleet gauge served as it is: the leader's value of the fleet's series.
    let room = &SCENARIOS[0];
    let values = gauges(room);
    let mut exprs = Vec::new();
    for gauge in FLEET_GAUGES {
        let (metric, (_, query)) = served
            .iter()
            .find(|(metric, (series, _))| series == gauge && *metric != wanted)
            .unwrap_or_else(|| panic!("the adapter serves no metric of {gauge}: {served:?}"));
        assert!(metric.starts_with("celld_fleet_"), "{metric}");
        exprs.push(expect(query, values.get(gauge).copied()));
    }
    tests.push(json!({
        "name": "every fleet gauge as it is",
        "interval": "1m",
        "input_series": input_series(room, namespace, fleet),
        "promql_expr_test": exprs,
    }));
    promtool_test(ADAPTER, tests);
}

#[test]
fn no_example_fleet_with_spec_autoscaling_is_scaled_by_keda_or_an_hpa() {
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".yaml") {
            docs.extend(documents(&format!("examples/{name}")));
        }
    }
    let autoscaled: Vec<&str> = docs
        .iter()
        .filter(|d| d["kind"] == "CelldFleet" && !d["spec"]["autoscaling"].is_null())
        .filter_map(|d| d["metadata"]["name"].as_str())
        .collect();
    assert!(
        !autoscaled.is_empty(),
        "an example fleet sets spec.autoscaling"
    );
    let scaled = scaled_fleets(&docs);
    assert!(scaled.len() >= 2, "{scaled:?}");
    for fleet in autoscaled {
        assert!(
            !scaled.iter().any(|s| s == fleet),
            "fleet {fleet} sets spec.autoscaling and is also the target of a ScaledObject or an HPA"
        );
    }
}

#[test]
fn operator_names_are_read_with_their_regular_expressions() {
    assert_eq!(
        operator_names(
            r#"max(celld_operator_fleet_x{a="b"}) {__name__=~"celld_operator_fleet_.+"}"#
        ),
        [
            ("celld_operator_fleet_x".to_owned(), false),
            ("celld_operator_fleet_".to_owned(), true)
        ]
    );
}
