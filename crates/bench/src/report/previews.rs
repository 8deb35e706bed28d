//! The report's section on previews: many previews of one fleet, each a fleet of its own,
//! judged against the scale targets' cost per fleet.

use super::format::{mib, secs, thousands, times, verdict};
use super::requests::{Column, table};
use super::targets::{AT_1000, per_fleet_rss_budget_kib};
use crate::previews::workload::{PREVIEW_REPLICAS, TTL};
use crate::results::PreviewsRun;
use crate::settings::{CONCURRENCY, QUIET};
use std::fmt::Write as _;

/// Writes the previews section.
pub fn previews(out: &mut String, p: &PreviewsRun) {
    let n = p.previews;
    let _ = writeln!(
        out,
        "\n## Previews\n\n{n} CelldPreviews of one fleet (`spec.previews`: {PREVIEW_REPLICAS} node each, a TTL of {TTL}), \
created from {CONCURRENCY} concurrent client tasks under one operator on a fresh control plane once the parent fleet \
was Ready and the operator had settled; then, after the idle minute, {n} more. Each preview is a fleet of its own: \
its cost is judged against the scale targets' cost per fleet, on the memory each of the second {n} added (the first \
carry the one-time costs a thousand fleets spread: the code of the preview path paged in, the first allocations of \
the runtime and the caches).\n"
    );
    let _ = writeln!(out, "| | target | measured |\n|---|---|---|");
    let mut row = |label: &str, target: &str, measured: String| {
        let target = if target.is_empty() {
            " ".to_string()
        } else {
            format!(" {target} ")
        };
        let _ = writeln!(out, "| {label} |{target}| {measured} |");
    };
    row(
        "first create → all previews' fleets Ready",
        "",
        secs(p.fleets_ready),
    );
    row(
        "first create → all previews Ready (phase Ready)",
        "",
        secs(p.previews_ready),
    );
    row(
        "status lag: max over previews of phase Ready − its fleet's Ready",
        "",
        secs(p.status_lag),
    );
    let note = if p.writes_stopped {
        ""
    } else {
        " (writes never stopped)"
    };
    row(
        &format!(
            "first create → settled (no write for {} s)",
            QUIET.as_secs()
        ),
        "",
        format!("{}{note}", secs(p.settled)),
    );
    let t = p.to_settle;
    row(
        "API requests until settled (writes)",
        "",
        format!("{} ({})", thousands(t.requests), thousands(t.writes)),
    );
    let per = n.max(1) as f64;
    row(
        "… per preview (writes per preview)",
        "",
        format!(
            "{:.1} ({:.1})",
            t.requests as f64 / per,
            t.writes as f64 / per
        ),
    );
    row(
        "server errors (5xx) until settled",
        "0",
        format!("{}{}", t.server_errors, verdict(t.server_errors == 0)),
    );
    let idle = p.idle_requests_per_minute();
    row(
        &format!("API requests per idle minute ({n} previews, their {n} fleets and the parent)"),
        &format!(
            "≤ {:.0}, as at {}",
            AT_1000.idle_requests,
            thousands(AT_1000.fleets as u64)
        ),
        format!("{idle:.0}{}", verdict(idle <= AT_1000.idle_requests)),
    );
    row(
        "writes per idle minute",
        "0",
        format!(
            "{:.0}{}",
            p.idle_writes_per_minute(),
            verdict(p.idle.writes == 0)
        ),
    );
    row(
        "server errors (5xx) while idle",
        "0",
        format!(
            "{}{}",
            p.idle.server_errors,
            verdict(p.idle.server_errors == 0)
        ),
    );
    row(
        "node GET /state reads per idle minute (capacity)",
        "",
        format!("{:.0}", p.idle_state_reads_per_minute()),
    );
    row(
        "CPU seconds per idle minute",
        "",
        format!("{:.2}", p.idle_cpu_seconds_per_minute()),
    );
    row("empty operator's resident memory", "", mib(p.empty_rss_kib));
    row(
        "resident memory with the parent only, settled (× empty)",
        "",
        format!(
            "{} ({})",
            mib(p.parent_rss_kib),
            times(p.parent_rss_kib as f64 / p.empty_rss_kib.max(1) as f64)
        ),
    );
    row(
        "resident memory after the previews settled (× empty)",
        "",
        format!(
            "{} ({})",
            mib(p.settled_rss_kib),
            times(p.settled_rss_kib as f64 / p.empty_rss_kib.max(1) as f64)
        ),
    );
    let budget = per_fleet_rss_budget_kib(p.empty_rss_kib);
    let growth = p.rss_growth_per_preview_kib();
    row(
        "memory growth per preview over the empty operator, the parent's share and the one-time costs included",
        "",
        format!(
            "{growth:.0} KiB ({} the budget per fleet)",
            times(growth / budget)
        ),
    );
    row(
        "… over the operator with the parent only",
        "",
        format!("{:.0} KiB", p.rss_growth_over_parent_per_preview_kib()),
    );
    row(
        "… of which file-backed (the binary's code paged in), empty → settled",
        "",
        format!("{} → {}", mib(p.empty_file_kib), mib(p.settled_file_kib)),
    );
    row(
        &format!("resident memory after {n} more previews settled (× empty)"),
        "",
        format!(
            "{} ({})",
            mib(p.doubled_rss_kib),
            times(p.doubled_rss_kib as f64 / p.empty_rss_kib.max(1) as f64)
        ),
    );
    let marginal = p.marginal_rss_per_preview_kib();
    row(
        &format!("memory each of those {n} previews added (× the budget per fleet)"),
        &format!(
            "≤ {budget:.0} KiB: ({:.0} MiB − empty) / {}",
            AT_1000.rss_mib,
            thousands(AT_1000.fleets as u64)
        ),
        format!(
            "{marginal:.0} KiB ({}){}",
            times(marginal / budget),
            verdict(marginal <= budget)
        ),
    );
    if !p.writes_to_settle.is_empty() {
        let _ = writeln!(
            out,
            "\n### Writes until settled, per preview\n\nBy resource and verb, from the same audit log: the preview's \
finalizer, its fleet and that fleet's children applied, the preview's and its fleet's status, and their Events.\n"
        );
        table(
            out,
            &[Column {
                header: format!("{n} previews"),
                counts: &p.writes_to_settle,
                per: n,
            }],
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::audit::Tally;
    use std::time::Duration;

    pub(crate) fn run() -> PreviewsRun {
        PreviewsRun {
            previews: 50,
            fleets_ready: Duration::from_millis(12_300),
            previews_ready: Duration::from_millis(12_700),
            status_lag: Duration::from_millis(400),
            settled: Duration::from_millis(14_000),
            writes_stopped: true,
            to_settle: Tally {
                requests: 1_234,
                writes: 1_100,
                server_errors: 0,
            },
            writes_to_settle: [
                (("celldfleets".into(), "patch".into()), 50),
                (("celldpreviews/status".into(), "patch".into()), 100),
            ]
            .into_iter()
            .collect(),
            idle: Tally {
                requests: 12,
                writes: 0,
                server_errors: 0,
            },
            idle_window: Duration::from_secs(60),
            idle_state_reads: 102,
            idle_cpu: Duration::from_millis(20),
            empty_rss_kib: 16 * 1024,
            empty_file_kib: 12 * 1024,
            parent_rss_kib: 17 * 1024,
            settled_rss_kib: 16 * 1024 + 50 * 40,
            settled_file_kib: 13 * 1024,
            doubled_rss_kib: 16 * 1024 + 50 * 40 + 50 * 30,
        }
    }

    fn render(p: &PreviewsRun) -> String {
        let mut out = String::new();
        previews(&mut out, p);
        out
    }

    #[test]
    fn the_section_judges_the_previews_against_the_cost_per_fleet() {
        let md = render(&run());
        let lines: Vec<&str> = md.lines().collect();
        for expected in [
            "| first create → all previews' fleets Ready | | 12.3 s |",
            "| first create → all previews Ready (phase Ready) | | 12.7 s |",
            "| status lag: max over previews of phase Ready − its fleet's Ready | | 0.4 s |",
            "| first create → settled (no write for 10 s) | | 14.0 s |",
            "| API requests until settled (writes) | | 1,234 (1,100) |",
            "| … per preview (writes per preview) | | 24.7 (22.0) |",
            "| server errors (5xx) until settled | 0 | 0 ✓ |",
            "| API requests per idle minute (50 previews, their 50 fleets and the parent) | ≤ 50, as at 1,000 | 12 ✓ |",
            "| writes per idle minute | 0 | 0 ✓ |",
            "| server errors (5xx) while idle | 0 | 0 ✓ |",
            "| node GET /state reads per idle minute (capacity) | | 102 |",
            "| CPU seconds per idle minute | | 0.02 |",
            "| empty operator's resident memory | | 16.0 MiB |",
            "| resident memory with the parent only, settled (× empty) | | 17.0 MiB (1.06×) |",
            "| resident memory after the previews settled (× empty) | | 18.0 MiB (1.12×) |",
            "| memory growth per preview over the empty operator, the parent's share and the one-time costs included | | 40 KiB (0.81× the budget per fleet) |",
            "| … over the operator with the parent only | | 20 KiB |",
            "| … of which file-backed (the binary's code paged in), empty → settled | | 12.0 MiB → 13.0 MiB |",
            "| resident memory after 50 more previews settled (× empty) | | 19.4 MiB (1.21×) |",
            "| memory each of those 50 previews added (× the budget per fleet) | ≤ 49 KiB: (64 MiB − empty) / 1,000 | 30 KiB (0.61×) ✓ |",
            "| resource | verb | 50 previews |",
            "| celldfleets | patch | 1.00 |",
            "| celldpreviews/status | patch | 2.00 |",
        ] {
            assert!(lines.contains(&expected), "missing {expected:?} in\n{md}");
        }
        assert!(md.starts_with("\n## Previews\n\n50 CelldPreviews of one fleet (`spec.previews`: 1 node each, a TTL of 24h), created from 32 concurrent client tasks"), "{md}");
    }

    #[test]
    fn a_missed_target_is_marked_missed() {
        let p = PreviewsRun {
            settled_rss_kib: 16 * 1024 + 50 * 120,
            doubled_rss_kib: 16 * 1024 + 50 * 120 + 50 * 60,
            idle: Tally {
                requests: 75,
                writes: 3,
                server_errors: 1,
            },
            writes_stopped: false,
            ..run()
        };
        let md = render(&p);
        let lines: Vec<&str> = md.lines().collect();
        for expected in [
            "| memory each of those 50 previews added (× the budget per fleet) | ≤ 49 KiB: (64 MiB − empty) / 1,000 | 60 KiB (1.22×) ✗ |",
            "| API requests per idle minute (50 previews, their 50 fleets and the parent) | ≤ 50, as at 1,000 | 75 ✗ |",
            "| writes per idle minute | 0 | 3 ✗ |",
            "| server errors (5xx) while idle | 0 | 1 ✗ |",
            "| first create → settled (no write for 10 s) | | 14.0 s (writes never stopped) |",
        ] {
            assert!(lines.contains(&expected), "missing {expected:?} in\n{md}");
        }
    }
}
