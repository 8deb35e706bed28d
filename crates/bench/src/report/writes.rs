//! The report's table of the operator's writes until settled, per fleet, by resource and verb:
//! what a change in writes per fleet is made of.

use crate::results::Scale;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Writes the table, a row per (resource, verb) any scale wrote, a column per scale.
pub fn writes(out: &mut String, scales: &[Scale]) {
    let kinds: BTreeSet<&(String, String)> = scales
        .iter()
        .flat_map(|s| s.operator.writes_to_settle.keys())
        .collect();
    if kinds.is_empty() {
        return;
    }
    let header: Vec<String> = scales
        .iter()
        .map(|s| format!("{} fleets", super::format::thousands(s.fleets() as u64)))
        .collect();
    let _ = writeln!(
        out,
        "\n### Writes until settled, per fleet\n\nBy resource and verb, from the same audit log. Each child is applied once (the public \
and the peer Service are the two `services`); the status is written when it changes: at least twice \
(created, then Ready), once more for each state between that a reconcile or the status follower \
sees, which depends on timing (a fleet whose first status write waits in a long queue until \
its pods are ready is written once); the Events are the condition changes a first status did not already show (Ready \
turning True); creating the children is not announced. Runs on the same machine \
differ by about one write per fleet in the status and Events rows.\n"
    );
    let _ = writeln!(out, "| resource | verb | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(scales.len()));
    for kind @ (resource, verb) in kinds {
        let cells: Vec<String> = scales
            .iter()
            .map(|s| {
                let n = s.operator.writes_to_settle.get(kind).copied().unwrap_or(0);
                format!("{:.2}", n as f64 / s.fleets().max(1) as f64)
            })
            .collect();
        let _ = writeln!(out, "| {resource} | {verb} | {} |", cells.join(" | "));
    }
}
