//! `bench/REPORT.md`: the table, the targets, how it was measured.

use crate::results::{ChurnRun, Results, Scale};
use crate::settings::{
    APISERVER_FLAGS, CHURN_REST, CHURN_SETTLE, CONCURRENCY, IDLE_WINDOW, QUIET, REPLICAS,
    SETTLE_LIMIT,
};
use std::fmt::Write as _;
use std::time::Duration;

/// The plot's file name, next to the report.
pub const PLOT_FILE: &str = "scaling.svg";

/// The time the whole run is meant to fit in.
const TIME_BUDGET: Duration = Duration::from_secs(20 * 60);

/// The fleet count the absolute targets are set for.
const TARGET_FLEETS: usize = 1000;
/// Largest status lag.
const LAG_TARGET: Duration = Duration::from_secs(5);
/// Most idle requests per minute at [`TARGET_FLEETS`].
const IDLE_REQUESTS_TARGET: f64 = 50.0;
/// Most resident memory at [`TARGET_FLEETS`], MiB.
const RSS_TARGET_MIB: f64 = 64.0;
/// Most resident memory after the churn, over the empty operator's.
const CHURN_RSS_TARGET: f64 = 1.2;
/// Most time for every StatefulSet to be ready at [`TARGET_FLEETS`], as a ratio to the floor.
const CONVERGE_TARGET: f64 = 1.3;
/// Most API requests per fleet until settled at [`TARGET_FLEETS`].
const REQUESTS_PER_FLEET_TARGET: f64 = 12.0;
/// Most CPU seconds per idle minute at [`TARGET_FLEETS`].
const IDLE_CPU_TARGET: f64 = 0.5;

/// `verdict(met)` for a measurement at [`TARGET_FLEETS`], nothing for the other counts.
fn at_target(s: &Scale, met: bool) -> &'static str {
    if s.fleets() == TARGET_FLEETS {
        verdict(met)
    } else {
        ""
    }
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn times(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.2}×")
    } else {
        "n/a".into()
    }
}

/// `✓` or `✗` after a value that has a target.
fn verdict(met: bool) -> &'static str {
    if met { " ✓" } else { " ✗" }
}

/// One row of the table: a label, a target, a cell per scale.
fn row(
    out: &mut String,
    label: &str,
    target: &str,
    scales: &[Scale],
    cell: impl Fn(&Scale) -> String,
) {
    let cells: Vec<String> = scales.iter().map(cell).collect();
    let target = if target.is_empty() {
        " ".to_string()
    } else {
        format!(" {target} ")
    };
    let _ = writeln!(out, "| {label} |{target}| {} |", cells.join(" | "));
}

fn table(out: &mut String, scales: &[Scale]) {
    let header: Vec<String> = scales
        .iter()
        .map(|s| format!("{} fleets", thousands(s.fleets() as u64)))
        .collect();
    let _ = writeln!(out, "| | target | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(scales.len()));
    row(
        out,
        "**floor**: first apply → all StatefulSets ready",
        "",
        scales,
        |s| secs(s.floor.statefulsets_ready),
    );
    row(
        out,
        "first create → all StatefulSets ready (× floor)",
        "≤ 1.3× at 1,000",
        scales,
        |s| {
            format!(
                "{} ({}){}",
                secs(s.operator.statefulsets_ready),
                times(s.statefulsets_ratio()),
                at_target(s, s.statefulsets_ratio() <= CONVERGE_TARGET)
            )
        },
    );
    row(
        out,
        "first create → all fleets Ready (× floor)",
        "",
        scales,
        |s| {
            format!(
                "{} ({})",
                secs(s.operator.fleets_ready),
                times(s.fleets_ratio())
            )
        },
    );
    row(
        out,
        "status lag: max over fleets of Ready − StatefulSet ready",
        "≤ 5 s",
        scales,
        |s| {
            format!(
                "{}{}",
                secs(s.operator.status_lag),
                verdict(s.operator.status_lag <= LAG_TARGET)
            )
        },
    );
    row(
        out,
        "first create → settled (no write for 10 s)",
        "",
        scales,
        |s| {
            let note = if s.operator.writes_stopped {
                ""
            } else {
                " (writes never stopped)"
            };
            format!("{}{note}", secs(s.operator.settled))
        },
    );
    row(
        out,
        "API requests until settled (writes)",
        "",
        scales,
        |s| {
            let t = s.operator.to_settle;
            format!("{} ({})", thousands(t.requests), thousands(t.writes))
        },
    );
    row(
        out,
        "… per fleet (writes per fleet)",
        "≤ 12 at 1,000",
        scales,
        |s| {
            let t = s.operator.to_settle;
            let n = s.fleets().max(1) as f64;
            let per_fleet = t.requests as f64 / n;
            format!(
                "{per_fleet:.1} ({:.1}){}",
                t.writes as f64 / n,
                at_target(s, per_fleet <= REQUESTS_PER_FLEET_TARGET)
            )
        },
    );
    row(out, "server errors (5xx) until settled", "0", scales, |s| {
        let n = s.operator.to_settle.server_errors;
        format!("{n}{}", verdict(n == 0))
    });
    row(
        out,
        "API requests per idle minute",
        "≤ 50 at 1,000",
        scales,
        |s| {
            let per_minute = s.operator.idle_requests_per_minute();
            format!(
                "{per_minute:.0}{}",
                at_target(s, per_minute <= IDLE_REQUESTS_TARGET)
            )
        },
    );
    row(out, "writes per idle minute", "0", scales, |s| {
        let w = s.operator.idle_writes_per_minute();
        format!("{w:.0}{}", verdict(s.operator.idle.writes == 0))
    });
    row(out, "server errors (5xx) while idle", "0", scales, |s| {
        let n = s.operator.idle.server_errors;
        format!("{n}{}", verdict(n == 0))
    });
    row(
        out,
        "CPU seconds per idle minute",
        "≤ 0.5 at 1,000",
        scales,
        |s| {
            let cpu = s.operator.idle_cpu_seconds_per_minute();
            format!("{cpu:.2}{}", at_target(s, cpu <= IDLE_CPU_TARGET))
        },
    );
    row(
        out,
        "resident memory after settling (× empty operator)",
        "≤ 64 MiB at 1,000",
        scales,
        |s| {
            let o = &s.operator;
            let mark = at_target(s, o.settled_rss_kib as f64 / 1024.0 <= RSS_TARGET_MIB);
            let r = o.settled_rss_kib as f64 / o.empty_rss_kib.max(1) as f64;
            format!("{} ({}){mark}", mib(o.settled_rss_kib), times(r))
        },
    );
    row(
        out,
        "memory growth per fleet over the empty operator",
        "",
        scales,
        |s| format!("{:.0} KiB", s.operator.rss_growth_per_fleet_kib()),
    );
    row(out, "empty operator's resident memory", "", scales, |s| {
        mib(s.operator.empty_rss_kib)
    });
}

fn churn(out: &mut String, c: &ChurnRun) {
    let cycles: Vec<String> = c.cycles.iter().map(|d| secs(*d)).collect();
    let _ = writeln!(
        out,
        "\n## Churn\n\n{} fleets created, all Ready, deleted and gone, {} times, under one operator on a fresh control plane.\n",
        c.fleets,
        c.cycles.len()
    );
    let _ = writeln!(out, "| | target | measured |\n|---|---|---|");
    let _ = writeln!(out, "| cycles | | {} |", cycles.join(", "));
    let _ = writeln!(
        out,
        "| empty operator's resident memory | | {} |",
        mib(c.empty_rss_kib)
    );
    let _ = writeln!(
        out,
        "| resident memory {} s after the churn (× empty) | | {} ({}) |",
        CHURN_REST.as_secs(),
        mib(c.after_rss_kib),
        times(c.early_rss_ratio()),
    );
    let _ = writeln!(
        out,
        "| resident memory {} s after the churn (× empty) | ≤ 1.2× | {} ({}){} |",
        CHURN_SETTLE.as_secs(),
        mib(c.settled_rss_kib),
        times(c.rss_ratio()),
        verdict(c.rss_ratio() <= CHURN_RSS_TARGET)
    );
    let _ = writeln!(
        out,
        "| … of which file-backed (the binary's code paged in), empty → {} s after | | {} → {} |",
        CHURN_SETTLE.as_secs(),
        mib(c.empty_file_kib),
        mib(c.settled_file_kib),
    );
    let n = c.connections;
    let _ = writeln!(
        out,
        "| open TCP connections {} s after the churn (API server, S3, other) | | {} ({}, {}, {}) |",
        CHURN_SETTLE.as_secs(),
        n.total(),
        n.api_server,
        n.s3,
        n.other
    );
    let _ = writeln!(
        out,
        "| API requests over the churn (writes, 5xx) | | {} ({}, {}) |",
        thousands(c.requests.requests),
        thousands(c.requests.writes),
        c.requests.server_errors
    );
}

fn method(out: &mut String, r: &Results) {
    let _ = writeln!(
        out,
        "\n## How it was measured\n\n\
- Every fleet count runs twice, each time on a fresh local control plane of its own, so nothing \
is left from a previous run in etcd, the API server's caches or kwok \
(`testenv/scripts/up.sh` with its own state directory; kube-apiserver v1.36.3, etcd, kwok fake \
nodes with room for {per_node} pods each, s3s-fs): once for the floor, once for the operator. The \
churn gets a third. Each fleet: {REPLICAS} nodes (`replicas: {REPLICAS}`), an Ingress, inline S3 \
storage with a credentials Secret, and a published deployment (`deploy/current.json` in its \
bucket prefix) before it is created.\n\
- **Floor**: the fleets are created (not timed: nothing reconciles them), then every child the \
operator would make for them (StatefulSet, Service, peer Service, NetworkPolicy, \
PodDisruptionBudget, Ingress) is rendered by the operator's own builders \
(`celld_operator::children::*::build`) and applied by server-side apply from {CONCURRENCY} \
concurrent client tasks; timed from the first apply until every StatefulSet has its {REPLICAS} \
pods ready.\n\
- **Operator**: the release build of `celld-operator` as its own process, with its default \
settings (every namespace, resync every 60 s) except leader election (off: one replica, and \
Lease renewals would be counted as idle writes). It runs as the ServiceAccount \
`celld-system/celld-operator` bound to the generated ClusterRole of `config/rbac/role.yaml`, \
with a token from the TokenRequest API. The fleets are created from {CONCURRENCY} concurrent \
client tasks; times run from the first create. A StatefulSet is ready, and a fleet Ready, when \
a watch of the bench first sees it so (`readyReplicas` = {REPLICAS}; condition `Ready=True`).\n\
- **Settled**: every fleet Ready and no write by the operator for {quiet} s (at most {limit} s \
after all were Ready); the moment of its last write. **Idle**: the {idle} s after that (one \
resync period: every fleet is reconciled once in it).\n\
- **API requests** come from the API server's audit log (`CELLD_TESTENV_AUDIT=1`, metadata \
level, extra flags `{APISERVER_FLAGS}`), counted by the operator's username, once per audit ID, \
by the time the API server received them; from the first create on (the operator's start-up \
lists and watches are not counted). A write is a create, update, patch, delete or \
deletecollection. A watch counts once, when opened.\n\
- **Memory** is the operator's `VmRSS` (`/proc/PID/status`); the empty operator's is read {warm} s \
after it started, before any fleet exists, and every memory figure is also given as a ratio to \
it. After the churn it is read {rest} s after the last fleet is gone and again, judged, {settle} s \
after: by then the deleted fleets' last resyncs have left the operator's queue and its connection \
pools have closed the connections idle since (after 90 s); its file-backed part (`RssFile`: \
mostly the binary's code, paged in as code paths first run, which the kernel may drop at any \
time) is shown beside. **CPU** is utime + stime from `/proc/PID/stat` over the idle window. **TCP connections** are \
the operator's socket descriptors that are ESTABLISHED in `/proc/PID/net/tcp{{,6}}`.\n\
- The machine is shared and noisy: times are given as ratios to the floor measured in the same \
run, memory as ratios to the empty operator. Whole run: {total} on {cores} cores, {date} \
(1-minute load average {load_start:.1} at the start, {load_end:.1} at the end). The bench tool \
itself is a debug build; the operator is built with the workspace's release profile.",
        per_node = crate::settings::PODS_PER_NODE,
        quiet = QUIET.as_secs(),
        limit = SETTLE_LIMIT.as_secs(),
        idle = IDLE_WINDOW.as_secs(),
        warm = crate::settings::WARM_UP.as_secs(),
        rest = CHURN_REST.as_secs(),
        settle = CHURN_SETTLE.as_secs(),
        total = minutes(r.total),
        cores = r.cores,
        date = r.date,
        load_start = r.load.0,
        load_end = r.load.1,
    );
    if !r.steps.is_empty() {
        let steps: Vec<String> = r
            .steps
            .iter()
            .map(|s| format!("{} {}", s.what, minutes(s.took)))
            .collect();
        let _ = writeln!(
            out,
            "- Time per run, control plane start and stop included: {}.",
            steps.join("; ")
        );
    }
    if r.total > TIME_BUDGET {
        let _ = writeln!(
            out,
            "- The whole run took longer than the {} minutes `make bench` is meant to fit in on a \
2-core machine; the times per run above show where it went.",
            TIME_BUDGET.as_secs() / 60
        );
    }
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{} min {:02} s", s / 60, s % 60)
}

/// The report's Markdown.
pub fn render(r: &Results) -> String {
    let mut out = String::from("# celld-operator at scale\n\n");
    let _ = writeln!(
        out,
        "Written by `make bench`. The operator against a floor (the same objects applied with no \
operator) on fresh local control planes; targets from the scale issue (✓ met, ✗ missed; \
absolute targets apply at 1,000 fleets).\n"
    );
    if r.scales.is_empty() {
        out.push_str("No fleet count was measured.\n");
    } else {
        table(&mut out, &r.scales);
        let _ = writeln!(
            out,
            "\n![time to ready and resident memory against the number of fleets]({PLOT_FILE})"
        );
    }
    if let Some(c) = &r.churn {
        churn(&mut out, c);
    }
    if let Some(p) = &r.plugin {
        crate::plugin_start::section(&mut out, p);
    }
    if !r.skipped.is_empty() {
        out.push_str("\n## Not measured\n\n");
        for s in &r.skipped {
            let _ = writeln!(out, "- {}: {}", s.what, s.why);
        }
    }
    method(&mut out, r);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::audit::Tally;
    use crate::results::{Connections, FloorRun, OperatorRun, Skipped, Step};

    pub(crate) fn scale(fleets: usize, floor_s: u64, ready_s: u64, rss_kib: u64) -> Scale {
        Scale {
            floor: FloorRun {
                fleets,
                objects: fleets * 6,
                statefulsets_ready: Duration::from_secs(floor_s),
            },
            operator: OperatorRun {
                fleets,
                statefulsets_ready: Duration::from_secs(ready_s - 1),
                fleets_ready: Duration::from_secs(ready_s),
                status_lag: Duration::from_millis(6_500),
                settled: Duration::from_secs(ready_s + 2),
                writes_stopped: true,
                to_settle: Tally {
                    requests: 12_345,
                    writes: 1_100,
                    server_errors: 0,
                },
                idle: Tally {
                    requests: 40,
                    writes: 0,
                    server_errors: 0,
                },
                idle_window: Duration::from_secs(60),
                idle_cpu: Duration::from_millis(1_500),
                empty_rss_kib: 16 * 1024,
                settled_rss_kib: rss_kib,
            },
        }
    }

    pub(crate) fn results() -> Results {
        Results {
            date: "2026-01-01".into(),
            cores: 2,
            total: Duration::from_secs(754),
            scales: vec![
                scale(100, 10, 20, 32 * 1024),
                scale(1000, 50, 150, 80 * 1024),
            ],
            churn: Some(ChurnRun {
                fleets: 300,
                cycles: vec![Duration::from_secs(30), Duration::from_secs(31)],
                empty_rss_kib: 16 * 1024,
                empty_file_kib: 10 * 1024,
                after_rss_kib: 24 * 1024,
                settled_rss_kib: 18 * 1024,
                settled_file_kib: 11 * 1024,
                connections: Connections {
                    api_server: 2,
                    s3: 1,
                    other: 0,
                },
                requests: Tally {
                    requests: 9_000,
                    writes: 4_000,
                    server_errors: 2,
                },
            }),
            plugin: Some(crate::plugin_start::PluginStart {
                plugin: Duration::from_micros(4_200),
                floor: Duration::from_micros(900),
            }),
            skipped: vec![Skipped {
                what: "3,000 fleets".into(),
                why: "not asked".into(),
            }],
            steps: vec![Step {
                what: "floor, 100 fleets".into(),
                took: Duration::from_secs(61),
            }],
            load: (2.5, 3.3),
        }
    }

    #[test]
    fn the_table_has_a_column_per_fleet_count_with_ratios_and_verdicts() {
        let md = render(&results());
        let lines: Vec<&str> = md.lines().collect();
        assert!(
            lines.contains(&"| | target | 100 fleets | 1,000 fleets |"),
            "{md}"
        );
        assert!(
            lines.contains(
                &"| **floor**: first apply → all StatefulSets ready | | 10.0 s | 50.0 s |"
            ),
            "{md}"
        );
        assert!(lines.contains(&"| first create → all StatefulSets ready (× floor) | ≤ 1.3× at 1,000 | 19.0 s (1.90×) | 149.0 s (2.98×) ✗ |"), "{md}");
        assert!(lines.contains(&"| first create → all fleets Ready (× floor) | | 20.0 s (2.00×) | 150.0 s (3.00×) |"), "{md}");
        assert!(lines.contains(&"| status lag: max over fleets of Ready − StatefulSet ready | ≤ 5 s | 6.5 s ✗ | 6.5 s ✗ |"), "{md}");
        assert!(
            lines.contains(
                &"| API requests until settled (writes) | | 12,345 (1,100) | 12,345 (1,100) |"
            ),
            "{md}"
        );
        assert!(
            lines.contains(
                &"| … per fleet (writes per fleet) | ≤ 12 at 1,000 | 123.5 (11.0) | 12.3 (1.1) ✗ |"
            ),
            "{md}"
        );
        // The absolute targets are judged at 1,000 fleets only.
        assert!(
            lines.contains(&"| API requests per idle minute | ≤ 50 at 1,000 | 40 | 40 ✓ |"),
            "{md}"
        );
        assert!(lines.contains(&"| resident memory after settling (× empty operator) | ≤ 64 MiB at 1,000 | 32.0 MiB (2.00×) | 80.0 MiB (5.00×) ✗ |"), "{md}");
        assert!(
            lines.contains(&"| CPU seconds per idle minute | ≤ 0.5 at 1,000 | 1.50 | 1.50 ✗ |"),
            "{md}"
        );
        assert!(md.contains("(scaling.svg)"));
    }

    #[test]
    fn the_churn_and_what_was_not_measured_have_sections() {
        let md = render(&results());
        assert!(
            md.contains(
                "| resident memory 120 s after the churn (× empty) | ≤ 1.2× | 18.0 MiB (1.12×) ✓ |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| resident memory 10 s after the churn (× empty) | | 24.0 MiB (1.50×) |"),
            "{md}"
        );
        assert!(
            md.contains("| … of which file-backed (the binary's code paged in), empty → 120 s after | | 10.0 MiB → 11.0 MiB |"),
            "{md}"
        );
        assert!(md.contains("| cycles | | 30.0 s, 31.0 s |"), "{md}");
        assert!(
            md.contains(
                "| open TCP connections 120 s after the churn (API server, S3, other) | | 3 (2, 1, 0) |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| API requests over the churn (writes, 5xx) | | 9,000 (4,000, 2) |"),
            "{md}"
        );
        assert!(md.contains("- 3,000 fleets: not asked"), "{md}");
        assert!(
            md.contains("| `kubectl celld --version` (× floor) | ≤ 20 ms | 4.2 ms (4.7×) ✓ |"),
            "{md}"
        );
        assert!(!md.contains("took longer than the 20 minutes"), "{md}");
        let mut slow = results();
        slow.total = Duration::from_secs(21 * 60);
        assert!(render(&slow).contains("took longer than the 20 minutes"));
        assert!(md.contains("Whole run: 12 min 34 s on 2 cores, 2026-01-01 (1-minute load average 2.5 at the start, 3.3 at the end)."), "{md}");
        assert!(md.contains("- Time per run, control plane start and stop included: floor, 100 fleets 1 min 01 s."), "{md}");
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
