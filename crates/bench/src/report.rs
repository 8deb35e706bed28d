//! `bench/REPORT.md` (or, for one fleet count measured alone, `bench/REPORT-<fleets>.md`): the
//! table, the targets, the fake nodes, the API server, how it was measured; and the plot linked
//! from it ([`plot`]).

mod calibration;
mod churn;
mod cpu;
#[cfg(test)]
pub(crate) mod fixtures;
mod format;
mod header;
mod method;
mod pairs;
pub mod plot;
mod previews;
mod requests;
mod rollout;
pub mod rollout_plot;
mod scales;
mod server;
mod targets;
#[cfg(test)]
mod tests;
mod unreachable;

use crate::results::Results;
use format::thousands;
use std::fmt::Write as _;
use targets::{AT_1000, AT_10000, Targets};

/// The plot's file name, next to the report.
pub const PLOT_FILE: &str = "scaling.svg";

/// The report's file name: `REPORT.md`, `REPORT-<fleets>.md` for one count measured alone, or
/// `REPORT-rollout-<fleets>.md` for the rollout alone.
pub fn file_name(single: Option<usize>, rollout_alone: Option<usize>) -> String {
    match (single, rollout_alone) {
        (Some(n), _) => format!("REPORT-{n}.md"),
        (None, Some(n)) => format!("REPORT-rollout-{n}.md"),
        (None, None) => "REPORT.md".into(),
    }
}

/// The targets `r` is judged against: those at 10,000 fleets for a count of 10,000 or more
/// measured alone, else those at 1,000.
fn targets(r: &Results) -> Targets {
    if r.single.is_some_and(|n| n >= AT_10000.fleets) {
        AT_10000
    } else {
        AT_1000
    }
}

/// The report's Markdown.
pub fn render(r: &Results) -> String {
    let t = targets(r);
    let mut out = header::header(r);
    if r.rollout_alone.is_some() {
        let _ = writeln!(
            out,
            " A CelldRollout under the operator against a floor (each wave's publishes with no operator, \
and its bake) on a fresh local control plane; targets from the scale issues (✓ met, ✗ missed; absolute \
targets apply at {} fleets).\n",
            thousands(t.fleets as u64)
        );
    } else {
        let _ = writeln!(
            out,
            " The operator against a floor (the same objects applied and one \
status written per fleet, at Ready, with no operator) on fresh local control planes; targets from the scale \
issues (✓ met, ✗ missed; absolute targets apply at {} fleets).\n",
            thousands(t.fleets as u64)
        );
    }
    if r.scales.is_empty() {
        if r.rollout_alone.is_none() {
            out.push_str("No fleet count was measured.\n");
        }
    } else {
        scales::table(&mut out, &r.scales, &r.repeats, &t);
        let _ = writeln!(
            out,
            "\nThe floor is the least any correct operator must send for these fleets, so the converge ratio \
cannot be below 1.00×: a ratio below 1.0 means the floor is wrong: it was not the limit (too few \
fake nodes, or the machine busy with other work while it ran); measure again."
        );
        pairs::section(&mut out, &r.scales, &r.repeats, &t);
        if r.single.is_none() {
            let _ = writeln!(
                out,
                "\n![time to ready and resident memory against the number of fleets]({PLOT_FILE})"
            );
        }
    }
    if let Some(u) = &r.unreachable {
        unreachable::section(&mut out, u, &r.scales);
    }
    if let Some(nodes) = &r.nodes {
        calibration::nodes(&mut out, nodes);
    }
    if !r.scales.is_empty() {
        server::server(&mut out, &r.scales);
        cpu::cpu(&mut out, &r.scales);
        requests::fleets(&mut out, &r.scales);
        requests::everyone(&mut out, &r.scales);
    }
    if let Some(c) = &r.churn {
        churn::churn(&mut out, c);
    }
    if let Some(p) = &r.previews {
        previews::previews(&mut out, p);
    }
    if let Some(rollout) = &r.rollout {
        rollout::rollout(&mut out, rollout, &rollout_plot::file_name(r.rollout_alone));
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
