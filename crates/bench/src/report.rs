//! `bench/REPORT.md`: the table, the targets, how it was measured.

mod churn;
mod format;
mod method;
mod previews;
mod targets;
mod writes;

use crate::results::{Results, Scale};
use format::{mib, secs, thousands, times, verdict};
use std::fmt::Write as _;
use targets::{
    CONVERGE_TARGET, IDLE_CPU_TARGET, IDLE_REQUESTS_TARGET, LAG_TARGET, REQUESTS_PER_FLEET_TARGET,
    RSS_TARGET_MIB, TARGET_FLEETS,
};

/// The plot's file name, next to the report.
pub const PLOT_FILE: &str = "scaling.svg";

/// `verdict(met)` for a measurement at [`TARGET_FLEETS`], nothing for the other counts.
fn at_target(s: &Scale, met: bool) -> &'static str {
    if s.fleets() == TARGET_FLEETS {
        verdict(met)
    } else {
        ""
    }
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
        "status lag: max over fleets (without spec.source) of Ready − StatefulSet ready",
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
        "node GET /state reads per idle minute (capacity)",
        "≤ 60 × --capacity-reads-per-second",
        scales,
        |s| format!("{:.0}", s.operator.idle_state_reads_per_minute()),
    );
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
        writes::writes(&mut out, &r.scales);
    }
    if let Some(c) = &r.churn {
        churn::churn(&mut out, c);
    }
    if let Some(p) = &r.previews {
        previews::previews(&mut out, p);
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
    method::method(&mut out, r);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::audit::Tally;
    use crate::results::{ChurnRun, Connections, Cycle, FloorRun, OperatorRun, Skipped, Step};
    use std::time::Duration;

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
                writes_to_settle: [
                    (
                        ("celldfleets/status".into(), "patch".into()),
                        fleets as u64 * 3,
                    ),
                    (("statefulsets".into(), "patch".into()), fleets as u64),
                ]
                .into_iter()
                .collect(),
                idle: Tally {
                    requests: 40,
                    writes: 0,
                    server_errors: 0,
                },
                idle_window: Duration::from_secs(60),
                idle_state_reads: 1_200,
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
                cycles: vec![
                    Cycle {
                        to_ready: Duration::from_secs(20),
                        to_gone: Duration::from_secs(10),
                    },
                    Cycle {
                        to_ready: Duration::from_secs(19),
                        to_gone: Duration::from_secs(12),
                    },
                ],
                empty_rss_kib: 16 * 1024,
                empty_file_kib: 10 * 1024,
                warm_rss_kib: 17 * 1024,
                warm_file_kib: 11 * 1024,
                cycle_rss_kib: vec![25 * 1024, 25 * 1024 + 512],
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
            previews: Some(super::previews::tests::run()),
            plugin: Some(crate::results::PluginStart {
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
        assert!(lines.contains(&"| status lag: max over fleets (without spec.source) of Ready − StatefulSet ready | ≤ 5 s | 6.5 s ✗ | 6.5 s ✗ |"), "{md}");
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
            md.contains(
                "| resident memory as each cycle's fleets were gone | | 25.0 MiB, 25.5 MiB |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| … of which file-backed (the binary's code paged in), empty → warm → 120 s after | | 10.0 MiB → 11.0 MiB → 11.0 MiB |"),
            "{md}"
        );
        assert!(
            md.contains("| resident memory 10 s after one fleet came and went, before the cycles: the warm empty operator (× empty) | | 17.0 MiB (1.06×) |"),
            "{md}"
        );
        assert!(
            md.contains("| … × the warm empty operator | | 1.06× |"),
            "{md}"
        );
        assert!(md.contains(
            "| cycles (first create → all Ready + deletion → all gone) | | 30.0 s (20.0 s + 10.0 s), 31.0 s (19.0 s + 12.0 s) |"
        ), "{md}");
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
        let (churn, previews, plugin) = (
            md.find("\n## Churn").unwrap(),
            md.find("\n## Previews").unwrap(),
            md.find("\n## Plugin start-up").unwrap(),
        );
        assert!(churn < previews && previews < plugin, "{md}");
        assert!(md.contains("- **Previews**: "), "{md}");
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
    fn writes_are_broken_down_per_fleet_by_resource_and_verb() {
        let mut r = results();
        r.scales[1]
            .operator
            .writes_to_settle
            .insert(("events".into(), "create".into()), 500);
        let md = render(&r);
        let lines: Vec<&str> = md.lines().collect();
        assert!(
            lines.contains(&"| resource | verb | 100 fleets | 1,000 fleets |"),
            "{md}"
        );
        assert!(
            lines.contains(&"| celldfleets/status | patch | 3.00 | 3.00 |"),
            "{md}"
        );
        // A kind only one scale wrote shows 0 for the others.
        assert!(lines.contains(&"| events | create | 0.00 | 0.50 |"), "{md}");
        assert!(
            lines.contains(&"| statefulsets | patch | 1.00 | 1.00 |"),
            "{md}"
        );
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
