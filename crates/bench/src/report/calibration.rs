//! The report's section on the fake nodes: how many every fleet count ran on, and, when the
//! bench chose them, the floor on more and more of them.

use super::format::{secs, thousands, times};
use crate::results::{Nodes, ratio};
use crate::settings::{CALIBRATION_GAIN, PODS_PER_NODE, fake_nodes};
use std::fmt::Write as _;

/// Writes the section.
pub fn nodes(out: &mut String, nodes: &Nodes) {
    let c = match nodes {
        Nodes::Given(n) => {
            let _ = writeln!(
                out,
                "\n### Fake nodes\n\nEvery run of the fleet counts had {}, as `--nodes` asked (not calibrated).",
                fake_nodes(*n)
            );
            return;
        }
        Nodes::Calibrated(c) => c,
    };
    let fleets = thousands(c.fleets as u64);
    let _ = writeln!(
        out,
        "\n### Fake nodes\n\nkwok does each node's work in turn, so too few fake nodes make the floor kwok's limit, not \
the API server's. The floor of {fleets} fleets, the largest count, ran on more and more of them: from {start} (room \
for {per_node} pods each), doubled until a run was less than {gain:.0} % faster than the one before; the fastest run \
chose the fake nodes of every floor and operator run above ({chosen}) and is the floor of {fleets} fleets.\n",
        start = c.start,
        per_node = PODS_PER_NODE,
        gain = CALIBRATION_GAIN * 100.0,
        chosen = c.nodes(),
    );
    let _ = writeln!(
        out,
        "| fake nodes | floor: first create → all fleets Ready | × the run before | API server requests/s |\n|---|---|---|---|"
    );
    let chosen = c.chosen().map(|r| r.nodes);
    let mut before = None;
    for r in &c.runs {
        let change = before.map_or(String::new(), |b| times(ratio(r.fleets_ready, b)));
        let mark = if Some(r.nodes) == chosen {
            " (chosen)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {}{mark} | {} | {change} | {:.0} |",
            r.nodes,
            secs(r.fleets_ready),
            r.server.rate()
        );
        before = Some(r.fleets_ready);
    }
    if let Some(f) = &c.failed {
        let _ = writeln!(out, "\n{}: not measured: {}", f.what, f.why);
    }
}
