//! The report's tables of the operator's writes until settled, per fleet or per preview, by
//! resource and verb: what a change in writes per fleet is made of.

use crate::audit::WritesByResource;
use crate::results::Scale;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One column of a writes table: its header, the writes, and what they are divided by.
pub struct Column<'a> {
    /// The header.
    pub header: String,
    /// The writes by resource and verb.
    pub writes: &'a WritesByResource,
    /// The count each cell is per (fleets, previews).
    pub per: usize,
}

/// Writes the table, a row per (resource, verb) any scale wrote, a column per scale.
pub fn writes(out: &mut String, scales: &[Scale]) {
    if scales
        .iter()
        .all(|s| s.operator.writes_to_settle.is_empty())
    {
        return;
    }
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
    let columns: Vec<Column<'_>> = scales
        .iter()
        .map(|s| Column {
            header: format!("{} fleets", super::format::thousands(s.fleets() as u64)),
            writes: &s.operator.writes_to_settle,
            per: s.fleets(),
        })
        .collect();
    table(out, &columns);
}

/// Writes a table with a row per (resource, verb) any column wrote, each cell its writes
/// divided by the column's count.
pub fn table(out: &mut String, columns: &[Column<'_>]) {
    let kinds: BTreeSet<&(String, String)> = columns.iter().flat_map(|c| c.writes.keys()).collect();
    let header: Vec<&str> = columns.iter().map(|c| c.header.as_str()).collect();
    let _ = writeln!(out, "| resource | verb | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(columns.len()));
    for kind @ (resource, verb) in kinds {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                let n = c.writes.get(kind).copied().unwrap_or(0);
                format!("{:.2}", n as f64 / c.per.max(1) as f64)
            })
            .collect();
        let _ = writeln!(out, "| {resource} | {verb} | {} |", cells.join(" | "));
    }
}
