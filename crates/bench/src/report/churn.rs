//! The report's section on the churn: fleets created and deleted cycle after cycle, and the
//! operator's memory and connections after it.

use super::format::{mib, secs, thousands, times, verdict};
use crate::results::ChurnRun;
use crate::settings::{CHURN_REST, CHURN_SETTLE};
use std::fmt::Write as _;

/// Most resident memory after the churn, over the empty operator's.
const CHURN_RSS_TARGET: f64 = 1.2;

/// Writes the churn section.
pub fn churn(out: &mut String, c: &ChurnRun) {
    let cycles: Vec<String> = c
        .cycles
        .iter()
        .map(|cycle| {
            format!(
                "{} ({} + {})",
                secs(cycle.total()),
                secs(cycle.to_ready),
                secs(cycle.to_gone)
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "\n## Churn\n\n{} fleets created, all Ready, deleted and gone, {} times, under one operator on a fresh control plane.\n",
        c.fleets,
        c.cycles.len()
    );
    let _ = writeln!(out, "| | target | measured |\n|---|---|---|");
    let _ = writeln!(
        out,
        "| cycles (first create → all Ready + deletion → all gone) | | {} |",
        cycles.join(", ")
    );
    let _ = writeln!(
        out,
        "| empty operator's resident memory | | {} |",
        mib(c.empty_rss_kib)
    );
    let _ = writeln!(
        out,
        "| resident memory {} s after one fleet came and went, before the cycles: the warm empty operator (× empty) | | {} ({}) |",
        CHURN_REST.as_secs(),
        mib(c.warm_rss_kib),
        times(c.warm_rss_kib as f64 / c.empty_rss_kib.max(1) as f64),
    );
    let gone: Vec<String> = c.cycle_rss_kib.iter().map(|kib| mib(*kib)).collect();
    let _ = writeln!(
        out,
        "| resident memory as each cycle's fleets were gone | | {} |",
        gone.join(", ")
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
        "| … × the warm empty operator | | {} |",
        times(c.warm_rss_ratio()),
    );
    let _ = writeln!(
        out,
        "| … of which file-backed (the binary's code paged in), empty → warm → {} s after | | {} → {} → {} |",
        CHURN_SETTLE.as_secs(),
        mib(c.empty_file_kib),
        mib(c.warm_file_kib),
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
