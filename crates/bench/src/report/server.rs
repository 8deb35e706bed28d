//! The report's table of what the API server handled while the fleets converged, floor and
//! operator side by side: its rate and latencies say whether it was the limit.

use super::format::{ms, secs, thousands};
use crate::audit::{Percentiles, ServerLoad};
use crate::results::Scale;
use std::fmt::Write as _;

/// Writes the section, a row per run.
pub fn server(out: &mut String, scales: &[Scale]) {
    let _ = writeln!(
        out,
        "\n### The API server during converge\n\nEvery request the API server handled, from everyone (the controllers, \
the scheduler, kwok, the bench, and the floor or the operator), each audit ID once, from the first create \
until every fleet was Ready; its latency is from receipt to response complete (watches, open until \
closed, have none). When the floor is the limit, it is the API server's: a rate that no longer grows with more fake \
nodes, and latencies that do. *kwok refused* counts the stage plays of the fake runtime (a pod made Running, a \
volume bound) the API server refused over the same time, from kwok's log: more than none, and kwok's retries, not \
the floor or the operator alone, set part of the pace. *cluster IP p50* is how long the API server took to \
create the IPAddress object of one Service's cluster IP (the public Services have one): it holds one lock across \
that create, so cluster IPs are allocated one at a time, every public Service waits for those before it, and a \
busier machine slows each.\n"
    );
    header(out, "converge");
    for s in scales {
        let fleets = thousands(s.fleets() as u64);
        let floor = format!("floor, {fleets} fleets");
        row(out, &floor, &s.floor.server, s.floor.kwok_refused);
        let operator = format!("operator, {fleets} fleets");
        row(out, &operator, &s.operator.server, s.operator.kwok_refused);
    }
}

/// Writes the table's header, the window's column named `window`.
pub(super) fn header(out: &mut String, window: &str) {
    let _ = writeln!(
        out,
        "| run | {window} | requests | requests/s | p50 | p90 | p99 | writes | writes p50 | writes p90 | writes p99 | cluster IP p50 | kwok refused |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
}

/// Writes one run's row.
pub(super) fn row(out: &mut String, run: &str, load: &ServerLoad, kwok_refused: u64) {
    let _ = writeln!(
        out,
        "| {run} | {} | {} | {:.0} | {} | {} | {} | {} | {} |",
        secs(load.window),
        thousands(load.requests),
        load.rate(),
        latencies(&load.all),
        thousands(load.writes.count),
        latencies(&load.writes),
        ms(load.cluster_ips.p50),
        thousands(kwok_refused),
    );
}

/// The p50, p90 and p99 cells.
fn latencies(p: &Percentiles) -> String {
    format!("{} | {} | {}", ms(p.p50), ms(p.p90), ms(p.p99))
}
