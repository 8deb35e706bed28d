//! The report's tables of requests by resource and verb, per fleet or per preview: what a
//! change in requests per fleet is made of, and how far the operator is from the floor.

use crate::audit::ByResource;
use crate::results::Scale;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// One column of a table: its header, the counts, and what they are divided by.
pub struct Column<'a> {
    /// The header.
    pub header: String,
    /// The requests by resource and verb.
    pub counts: &'a ByResource,
    /// The count each cell is per (fleets, previews).
    pub per: usize,
}

/// Writes the fleets' table: for each fleet count the operator's requests until settled per
/// fleet, and the floor's next to it.
pub fn fleets(out: &mut String, scales: &[Scale]) {
    if scales
        .iter()
        .all(|s| s.operator.by_resource.is_empty() && s.floor.by_resource.is_empty())
    {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Requests until settled, per fleet\n\nBy resource and verb, reads and writes, from the same audit log: the operator's from \
the first create until it settled, and next to each count the floor's from its first create until every fleet was \
Ready (each child applied, and one status, at Ready). Each child is applied \
once (the public and the peer Service are the two `services`); the operator reads from the caches its watches fill, \
so its gets are the few objects it does not cache, and a watch counts when it is opened again. Its status is written \
when it changes: once created and once Ready, once more for each state between that a reconcile or the status \
follower sees, which depends on timing, and once in all for a fleet whose first status write waited in the queue \
until its pods were ready (an observation that comes while a write is pending is coalesced into it; so the floor, \
the least any operator must send, writes one); the Events are the condition changes a first status did not already show (Ready turning \
True); creating the children is not announced. Runs on the same machine differ by about one write per fleet in the \
status and Events rows.\n"
    );
    let columns: Vec<Column<'_>> = scales
        .iter()
        .flat_map(|s| {
            let fleets = super::format::thousands(s.fleets() as u64);
            side_by_side(
                s,
                (format!("{fleets} fleets"), &s.operator.by_resource),
                (format!("floor, {fleets}"), &s.floor.by_resource),
            )
        })
        .collect();
    table(out, &columns);
}

/// Writes the table of everyone's writes while the largest of `scales` converged (its first
/// pair), the floor's run next to the operator's: what the control plane wrote more of, and why.
pub fn everyone(out: &mut String, scales: &[Scale]) {
    let Some(s) = scales.last() else {
        return;
    };
    if s.operator.server_writes.is_empty() && s.floor.server_writes.is_empty() {
        return;
    }
    let fleets = super::format::thousands(s.fleets() as u64);
    let _ = writeln!(
        out,
        "\n### Everyone's writes while {fleets} fleets converged, per fleet\n\nEvery user's writes in the \
same audit log (the controllers', the scheduler's, kwok's, the bench's and the floor's or the \
operator's), from the first create until every fleet was Ready, by resource and verb, divided by \
the fleets: where the control plane works more in one run than in the other (the first pair).\n"
    );
    table(
        out,
        &side_by_side(
            s,
            (
                format!("operator's run, {fleets}"),
                &s.operator.server_writes,
            ),
            (format!("floor's run, {fleets}"), &s.floor.server_writes),
        ),
    );
}

/// The operator's and the floor's counts of `s`, each per fleet, under their headers.
fn side_by_side<'a>(
    s: &Scale,
    operator: (String, &'a ByResource),
    floor: (String, &'a ByResource),
) -> [Column<'a>; 2] {
    [operator, floor].map(|(header, counts)| Column {
        header,
        counts,
        per: s.fleets(),
    })
}

/// Writes a table with a row per (resource, verb) any column has, each cell its count divided
/// by the column's.
pub fn table(out: &mut String, columns: &[Column<'_>]) {
    let kinds: BTreeSet<&(String, String)> = columns.iter().flat_map(|c| c.counts.keys()).collect();
    let header: Vec<&str> = columns.iter().map(|c| c.header.as_str()).collect();
    let _ = writeln!(out, "| resource | verb | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(columns.len()));
    for kind @ (resource, verb) in kinds {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                let n = c.counts.get(kind).copied().unwrap_or(0);
                format!("{:.2}", n as f64 / c.per.max(1) as f64)
            })
            .collect();
        let resource = if resource.is_empty() {
            "(none)"
        } else {
            resource
        };
        let _ = writeln!(out, "| {resource} | {verb} | {} |", cells.join(" | "));
    }
}
