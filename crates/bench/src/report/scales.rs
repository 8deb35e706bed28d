//! The report's first table: one column per fleet count, the operator against its floor and the
//! targets.

use super::format::{mib, secs, thousands, times, verdict};
use super::pairs;
use super::targets::Targets;
use crate::measure::status_lag::StatusLag;
use crate::results::Scale;
use std::fmt::Write as _;

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

/// The converge ratio with its verdict at the target count; where the count ran several pairs,
/// the verdict goes by their median. A pair below 1.00× is named and left out of the median
/// (its floor was not the limit); with no pair left, nothing is judged.
fn converge_cell(s: &Scale, repeats: &[Scale], t: &Targets) -> String {
    let pairs = pairs::of(s, repeats);
    let c = pairs::converge(&pairs);
    let first = format!(
        "{} ({}",
        secs(s.operator.fleets_ready),
        times(s.converge_ratio())
    );
    if c.counted.is_empty() && pairs.len() == 1 {
        return format!("{first}) — below 1: the floor is wrong, not judged; measure again");
    }
    if c.counted.is_empty() {
        return format!(
            "{first}; no pair counts, {}) — below 1: the floor is wrong, not judged; measure again",
            c.excluded_note().unwrap_or_default()
        );
    }
    let mark = at(t, s, c.median <= t.converge);
    let median = match (pairs.len(), c.excluded_note()) {
        (1, _) => String::new(),
        (_, None) => format!("; median of {} pairs {}", pairs.len(), times(c.median)),
        (n, Some(note)) => format!(
            "; median of {} of {n} pairs {}, {note}",
            c.counted.len(),
            times(c.median)
        ),
    };
    format!("{first}{median}){mark}")
}

/// CPU seconds per idle minute with its verdict at the target count, by the median where the
/// count ran several pairs.
fn idle_cpu_cell(s: &Scale, repeats: &[Scale], t: &Targets) -> String {
    let pairs = pairs::of(s, repeats);
    let cpu = pairs::idle_cpu(&pairs);
    let median = if pairs.len() > 1 {
        format!(" (median of {} pairs {cpu:.2})", pairs.len())
    } else {
        String::new()
    };
    format!(
        "{:.2}{median}{}",
        s.operator.idle_cpu_seconds_per_minute(),
        at(t, s, cpu <= t.idle_cpu)
    )
}

/// `verdict(met)` for a measurement at the targets' fleet count, nothing for the other counts.
fn at(t: &Targets, s: &Scale, met: bool) -> &'static str {
    if s.fleets() == t.fleets {
        verdict(met)
    } else {
        ""
    }
}

/// Writes the table; `repeats` are the largest count's further pairs.
pub fn table(out: &mut String, scales: &[Scale], repeats: &[Scale], t: &Targets) {
    let header: Vec<String> = scales
        .iter()
        .map(|s| format!("{} fleets", thousands(s.fleets() as u64)))
        .collect();
    let at_count = format!("at {}", thousands(t.fleets as u64));
    let _ = writeln!(out, "| | target | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(scales.len()));
    row(
        out,
        "**floor**: first create → all StatefulSets ready",
        "",
        scales,
        |s| secs(s.floor.statefulsets_ready),
    );
    row(
        out,
        "**floor**: first create → all fleets Ready (one status per fleet, once its StatefulSet is ready and its children applied)",
        "",
        scales,
        |s| secs(s.floor.fleets_ready),
    );
    row(
        out,
        "first create → all StatefulSets ready (× the floor's)",
        "",
        scales,
        |s| {
            format!(
                "{} ({})",
                secs(s.operator.statefulsets_ready),
                times(s.statefulsets_ratio())
            )
        },
    );
    row(
        out,
        "**converge**: first create → all fleets Ready (× the floor's)",
        &format!("≤ {:.1}× {at_count}", t.converge),
        scales,
        |s| converge_cell(s, repeats, t),
    );
    row(
        out,
        "status lag: max over fleets (without spec.source) of Ready − StatefulSet ready",
        &format!("≤ {} s", t.lag.as_secs()),
        scales,
        |s| {
            format!(
                "{}{}",
                secs(s.operator.status_lag.max),
                verdict(s.operator.status_lag.max <= t.lag)
            )
        },
    );
    row(out, "… p50, p99 over the fleets", "", scales, |s| {
        lag_spread(&s.operator.status_lag)
    });
    row(
        out,
        "… from the StatefulSet ready until the API server received the write that said Ready: p50, p99; that write in the API server: p50, p99",
        "",
        scales,
        |s| write_split(&s.operator.status_lag),
    );
    row(
        out,
        "… the largest, from the StatefulSet ready: until the API server received the write that said Ready; in the API server; until the bench's watch saw it",
        "",
        scales,
        |s| worst_split(&s.operator.status_lag),
    );
    row(
        out,
        "… fleets whose public Service the operator created before their StatefulSet (it does while the API server is slow to create Services)",
        "",
        scales,
        |s| format!("{} of {}", s.operator.services_first, s.operator.fleets),
    );
    row(
        out,
        "… the floor's (not judged): max; p50, p99; until its write, in the API server; the largest's split",
        "",
        scales,
        |s| {
            format!(
                "{}; {}; {}; {}",
                secs(s.floor.status_lag.max),
                lag_spread(&s.floor.status_lag),
                write_split(&s.floor.status_lag),
                worst_split(&s.floor.status_lag)
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
    let per_fleet_target = t.requests_over_floor.map_or(String::new(), |n| {
        format!("≤ the floor's + {n:.0} {at_count}")
    });
    row(
        out,
        "… per fleet (writes per fleet)",
        &per_fleet_target,
        scales,
        |s| {
            let tally = s.operator.to_settle;
            let n = s.fleets().max(1) as f64;
            let per_fleet = tally.requests as f64 / n;
            let floor = s.floor.requests.requests as f64 / n;
            let mark = t
                .requests_over_floor
                .map_or("", |over| at(t, s, per_fleet <= floor + over));
            format!("{per_fleet:.1} ({:.1}){mark}", tally.writes as f64 / n)
        },
    );
    row(
        out,
        "… the floor's, per fleet (writes per fleet)",
        "",
        scales,
        |s| {
            let tally = s.floor.requests;
            let n = s.fleets().max(1) as f64;
            format!(
                "{:.1} ({:.1})",
                tally.requests as f64 / n,
                tally.writes as f64 / n
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
        &format!("≤ {:.0} {at_count}", t.idle_requests),
        scales,
        |s| {
            let per_minute = s.operator.idle_requests_per_minute();
            format!("{per_minute:.0}{}", at(t, s, per_minute <= t.idle_requests))
        },
    );
    row(
        out,
        "writes per idle minute (fleets first showing their capacity in it)",
        "0 but those",
        scales,
        |s| {
            let o = &s.operator;
            let w = o.idle_writes_per_minute();
            format!(
                "{w:.0} ({}){}",
                thousands(o.idle_first_capacity),
                verdict(o.idle_other_writes() == 0)
            )
        },
    );
    row(
        out,
        "first capacity round, waited for before idle: all fleets show their capacity (how many), then settled",
        "",
        scales,
        |s| {
            s.operator.capacity_round.map_or_else(
                || "– (idle ended before any fleet was 5 min old)".to_string(),
                |c| {
                    format!(
                        "{} ({}), {}",
                        secs(c.took),
                        thousands(c.shown),
                        secs(c.settled)
                    )
                },
            )
        },
    );
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
        &format!("≤ {} {at_count}", t.idle_cpu),
        scales,
        |s| idle_cpu_cell(s, repeats, t),
    );
    row(
        out,
        "resident memory after settling (× empty operator)",
        &format!("≤ {:.0} MiB {at_count}", t.rss_mib),
        scales,
        |s| {
            let o = &s.operator;
            let mark = at(t, s, o.settled_rss_kib as f64 / 1024.0 <= t.rss_mib);
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
    row(
        out,
        "control plane's resident memory after settling: kube-apiserver, etcd",
        "",
        scales,
        |s| {
            let c = s.operator.control_plane;
            format!("{}, {}", mib(c.apiserver_kib), mib(c.etcd_kib))
        },
    );
}

/// A status lag's median and 99th percentile over the fleets.
fn lag_spread(lag: &StatusLag) -> String {
    format!("{}, {}", secs(lag.spread.p50), secs(lag.spread.p99))
}

/// Where the largest status lag went, and whose it was; a dash when the audit log did not have
/// its write.
fn worst_split(lag: &StatusLag) -> String {
    lag.worst.as_ref().map_or_else(
        || "–".to_string(),
        |w| {
            format!(
                "{}, {}, {} ({})",
                secs(w.to_write),
                secs(w.in_server),
                secs(w.to_watch),
                w.fleet
            )
        },
    )
}

/// The percentiles of the time until the Ready write was received and of its time in the API
/// server.
fn write_split(lag: &StatusLag) -> String {
    format!(
        "{}, {}; {}, {}",
        secs(lag.to_write.p50),
        secs(lag.to_write.p99),
        secs(lag.in_server.p50),
        secs(lag.in_server.p99)
    )
}
