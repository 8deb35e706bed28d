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

mod metric_names;
mod scenarios;
mod tools;

use metric_names::{FLEET_GAUGES, OTHER_METRICS, assert_known_names, operator_names};
use scenarios::{SCENARIOS, expect, gauges, input_series, scenario_tests};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tools::{document, documents, promtool_test, root, run, tool};

const KEDA: &str = "examples/autoscaling-keda.yaml";
const ADAPTER: &str = "examples/autoscaling-prometheus-adapter.yaml";

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
