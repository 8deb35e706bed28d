//! The operator's real `/metrics`, linted by Prometheus's own checker: the operator binary runs
//! as a process on the local control plane (as its admin, the way `Launch::on_namespace` starts
//! it) with one fleet reconciled to Ready (its nodes' state read from a stand-in of celld's node
//! API), its exposition is scraped and piped into
//! `promtool check metrics` (`.testenv/bin/promtool`, built from the Prometheus Go module by
//! `make testenv`), and every problem promtool reports fails the test. The families of
//! [`EXPECTED_FAMILIES`] must be in it.
//!
//! promtool lints the Prometheus text format (0.0.4); the operator serves OpenMetrics text. The
//! two differ in their envelope only, and [`prometheus_text`] turns one into the other exactly
//! as far as they differ: a counter family `x` (OpenMetrics) is `x_total` (its samples' name)
//! in the Prometheus text format, `unknown` is `untyped`, and `# UNIT` and `# EOF` do not
//! exist there. Sample lines pass unchanged. Fed the OpenMetrics text as it is, promtool reads
//! each counter's samples as a family of their own without help text.

use crate::support::*;
use celld_fixtures::{Launch, NodeDouble, OperatorProcess};
use celld_testkit::{Check, wait_until};
use serde_json::json;
use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

/// Metric families the exposition must declare (a `# TYPE` line), by the names PromQL queries
/// them by. A labelled family is in the exposition once it holds a series: the reconcile
/// errors (`celld_operator_reconcile_errors_total{reason}`), watch stalls
/// (`celld_operator_watch_stalls_total{watch}`) and autoscaler decisions
/// (`celld_operator_autoscaler_decisions_total{direction,reason}`) of a run without any are
/// not, so they are not listed. The fleet capacity gauges are declared with or without
/// fleets; the test waits for one node `/state` read so that its counter holds a series.
const EXPECTED_FAMILIES: &[&str] = &[
    "celld_operator_reconciles_total",
    "celld_operator_reconcile_duration_seconds",
    "celld_operator_reconciles_unchanged_total",
    "celld_operator_status_followed_total",
    "celld_operator_api_writes_total",
    "celld_operator_api_reads_total",
    "celld_operator_fleets",
    "celld_operator_leader",
    "celld_operator_nodes_unreachable",
    "celld_operator_s3_clients",
    "celld_operator_watch_last_event_timestamp_seconds",
    "celld_operator_source_publishes_total",
    "celld_operator_source_drift_total",
    "celld_operator_node_state_reads_total",
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

/// The version the fleet's bucket and nodes serve.
const VERSION: &str = "00000000000000e1";

/// The celld release the node stand-in plays: the default image's.
const RELEASE: &str = "0.6.0";

/// The Prometheus text format (0.0.4) of an OpenMetrics text exposition: counter families
/// renamed to their samples' name (`x` → `x_total`), `unknown` written `untyped`, `# UNIT`
/// lines and `# EOF` dropped, everything else unchanged. Fails on what the Prometheus text
/// format cannot say (info, stateset and gaugehistogram families, exemplars, `_created`
/// samples), rather than lint something else than what the operator serves.
fn prometheus_text(openmetrics: &str) -> Result<String, String> {
    let mut counters = BTreeSet::new();
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest
                .split_once(' ')
                .ok_or_else(|| format!("a TYPE line without a type: {line:?}"))?;
            match kind {
                "counter" => {
                    counters.insert(name.to_owned());
                }
                "gauge" | "histogram" | "summary" | "unknown" => {}
                other => {
                    return Err(format!(
                        "family {name} is of type {other}, which the Prometheus text format lacks"
                    ));
                }
            }
        }
    }
    let mut lines = openmetrics.lines().peekable();
    let mut out = String::new();
    while let Some(line) = lines.next() {
        if line == "# EOF" {
            if lines.peek().is_some() {
                return Err("lines after # EOF".into());
            }
            continue;
        }
        if line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            let name = family_name(name, &counters);
            format!("# HELP {name} {help}")
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let kind = if kind == "unknown" { "untyped" } else { kind };
            format!("# TYPE {} {kind}", family_name(name, &counters))
        } else {
            let name = line.split(['{', ' ']).next().unwrap_or_default();
            if let Some(base) = name.strip_suffix("_created")
                && counters.contains(base)
            {
                return Err(format!("a _created sample: {line:?}"));
            }
            if line.contains(" # {") {
                return Err(format!("an exemplar: {line:?}"));
            }
            line.to_owned()
        };
        out.push_str(&renamed);
        out.push('\n');
    }
    Ok(out)
}

/// A family's name in the Prometheus text format: a counter's is its samples' (`x_total`).
fn family_name(name: &str, counters: &BTreeSet<String>) -> String {
    if counters.contains(name) {
        format!("{name}_total")
    } else {
        name.to_owned()
    }
}

/// The families a Prometheus text exposition declares (its `# TYPE` lines).
fn declared_families(text: &str) -> BTreeSet<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.split(' ').next())
        .collect()
}

/// Runs `promtool check metrics` on `text`: the problems it reports, one a line, or a panic
/// when it cannot run or fails for another reason than problems (exit codes: 0 clean, 3
/// problems found, anything else an error).
fn promtool_problems(text: &str) -> Vec<String> {
    let tool = celld_testkit::paths::promtool();
    assert!(
        tool.exists(),
        "{} is missing: build and link it with `make cluster-up` (testenv/scripts/build.sh promtool)",
        tool.display()
    );
    let mut child = Command::new(&tool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("the exposition written to promtool");
    let out = child.wait_with_output().expect("promtool ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0 | 3) => stderr.lines().map(str::to_owned).collect(),
        _ => panic!(
            "promtool check metrics failed ({}): {}{stderr}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        ),
    }
}

#[test]
fn the_prometheus_text_of_an_openmetrics_exposition_renames_counters_only_and_lints_clean() {
    let openmetrics = "# HELP a_reconciles Reconciles.\n# TYPE a_reconciles counter\n\
        a_reconciles_total{result=\"ok\"} 3\n# HELP a_leader Leads.\n# TYPE a_leader gauge\n\
        a_leader 1\n# HELP a_wait_seconds Waits.\n# TYPE a_wait_seconds histogram\n\
        # UNIT a_wait_seconds seconds\na_wait_seconds_sum 0.5\na_wait_seconds_count 1\n\
        a_wait_seconds_bucket{le=\"+Inf\"} 1\n# HELP a_other Other.\n# TYPE a_other unknown\na_other 2\n# EOF\n";
    let text = prometheus_text(openmetrics).unwrap();
    assert_eq!(
        text,
        "# HELP a_reconciles_total Reconciles.\n# TYPE a_reconciles_total counter\n\
        a_reconciles_total{result=\"ok\"} 3\n# HELP a_leader Leads.\n# TYPE a_leader gauge\n\
        a_leader 1\n# HELP a_wait_seconds Waits.\n# TYPE a_wait_seconds histogram\n\
        a_wait_seconds_sum 0.5\na_wait_seconds_count 1\n\
        a_wait_seconds_bucket{le=\"+Inf\"} 1\n# HELP a_other Other.\n# TYPE a_other untyped\na_other 2\n"
    );
    assert_eq!(
        declared_families(&text).into_iter().collect::<Vec<_>>(),
        [
            "a_leader",
            "a_other",
            "a_reconciles_total",
            "a_wait_seconds"
        ]
    );
    // What promtool makes of each: the OpenMetrics counter's samples are a family of their
    // own without help; the Prometheus text passes; a gauge named like a counter does not.
    let counter = "# HELP a_reconciles Reconciles.\n# TYPE a_reconciles counter\n\
        a_reconciles_total{result=\"ok\"} 3\n# EOF\n";
    assert_eq!(
        promtool_problems(counter),
        ["a_reconciles_total no help text"]
    );
    assert_eq!(promtool_problems(&text), Vec::<String>::new());
    let gauge_total =
        "# HELP a_things_total Things.\n# TYPE a_things_total gauge\na_things_total 1\n";
    assert_eq!(
        promtool_problems(&format!("{text}{gauge_total}")),
        ["a_things_total non-counter metrics should not have \"_total\" suffix"]
    );
    assert!(prometheus_text("# TYPE a_build info\na_build_info{v=\"1\"} 1\n").is_err());
    assert!(prometheus_text("# TYPE a counter\na_total 1 # {id=\"x\"} 1\n").is_err());
}

#[tokio::test]
async fn the_operators_metrics_pass_promtool_check_metrics() {
    let env = env_with_crds("metrics-lint").await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "metrics-lint");
    create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    publish_pointer(&s3, &prefix, VERSION).await;
    let nodes = NodeDouble::start(RELEASE, VERSION)
        .await
        .expect("the node double");
    let log = env.scratch_dir().expect("scratch dir").join("operator.log");
    let launch = Launch::on_namespace(env.namespace(), &log)
        .await
        .expect("the operator binary")
        .args(["--node-api-connect-to".to_owned(), nodes.address.clone()]);
    let operator = OperatorProcess::start_leading(launch)
        .await
        .expect("the operator leads");

    let fleet = inline_fleet("web", &s3, &prefix, json!({})).expect("a valid CelldFleet");
    apply_fleet(&env, &fleet).await;
    wait_condition(&env, "web", "Ready", "True", Some("Serving")).await;
    let exposition = wait_until(
        "a reconcile and a node read counted in /metrics",
        TIMEOUT,
        || async {
            match operator.metrics().await {
                Ok(m)
                    if m.contains("celld_operator_reconciles_total{result=\"ok\"}")
                        && m.contains("celld_operator_node_state_reads_total{reader=\"capacity\",result=\"ok\"}") =>
                {
                    Check::Done(m)
                }
                Ok(m) => Check::Pending(m),
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await
    .expect("the operator counts its reconciles");

    let text = prometheus_text(&exposition)
        .unwrap_or_else(|e| panic!("{e}\nthe exposition:\n{exposition}"));
    let problems = promtool_problems(&text);
    assert!(
        problems.is_empty(),
        "promtool check metrics found {} problem(s) in the operator's /metrics:\n{}\n\nthe exposition (Prometheus text format):\n{text}",
        problems.len(),
        problems.join("\n")
    );
    let declared = declared_families(&text);
    let missing: Vec<&str> = EXPECTED_FAMILIES
        .iter()
        .copied()
        .filter(|f| !declared.contains(f))
        .collect();
    assert!(
        missing.is_empty(),
        "the operator's /metrics lacks {missing:?}; it declares {declared:?}"
    );

    operator.stop().await;
    env.cleanup().await.expect("cleanup");
}
