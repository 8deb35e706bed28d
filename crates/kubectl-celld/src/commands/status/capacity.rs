//! `status FLEET` of a fleet whose nodes report their capacity (status.capacity) and, with
//! spec.autoscaling, what the autoscaler decided from it (status.autoscaling): a table of the
//! nodes with a total line, when they were read, the signals their celld does not report, each
//! unreadable node's error; the bounds, desired and current nodes, the last decision, what holds
//! the autoscaler, and the Autoscaling and IdleEviction conditions when they are not True.
//! Pure: the time is an argument.

use super::report::{AutoscalingReport, ConditionReport};
use crate::cluster::capacity::{Signal, count, reported, yes_no};
use crate::text::human;
use crate::text::table::Table;
use celld_api::conditions::{AUTOSCALING, IDLE_EVICTION};
use celld_api::{CapacityStatus, CelldFleet, NodeCapacity};
use jiff::Timestamp;

/// The autoscaling report of `fleet`, None without spec.autoscaling; `conditions` are the
/// fleet's.
pub fn report(fleet: &CelldFleet, conditions: &[ConditionReport]) -> Option<AutoscalingReport> {
    let spec = fleet.spec.autoscaling.clone()?;
    Some(AutoscalingReport {
        spec,
        observed: fleet
            .status
            .as_ref()
            .and_then(|s| s.autoscaling.as_deref().cloned()),
        conditions: conditions
            .iter()
            .filter(|c| c.type_ == AUTOSCALING || c.type_ == IDLE_EVICTION)
            .cloned()
            .collect(),
    })
}

fn ago(rfc3339: &str, now: Timestamp) -> String {
    human::age_of(rfc3339, now).map_or_else(|| format!("at {rfc3339}"), |age| format!("{age} ago"))
}

fn plural(n: i32, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn rss(n: Option<u64>) -> String {
    n.map_or_else(|| "-".to_string(), human::bytes)
}

/// The first line of the Capacity field: when, from how many nodes, what is not reported.
pub fn summary(c: &CapacityStatus, now: Timestamp) -> String {
    let t = &c.total;
    let mut s = format!("read {} from ", ago(&c.read_at, now));
    if t.nodes_unreadable > 0 {
        s.push_str(&format!(
            "{} of {} ({} unreadable)",
            t.nodes_read,
            plural(t.nodes_read + t.nodes_unreadable, "node"),
            t.nodes_unreadable
        ));
    } else {
        s.push_str(&plural(t.nodes_read, "node"));
    }
    if !c.unreported.is_empty() {
        s.push_str(&format!(
            "\nnot reported by the nodes' celld release: {}",
            c.unreported.join(", ")
        ));
    }
    s
}

/// `N/M` nodes of those read, or `-` when the nodes do not report the signal.
fn of_read(c: &CapacityStatus, signal: Signal, n: i32) -> String {
    if reported(c, signal) {
        format!("{n}/{}", c.total.nodes_read)
    } else {
        "-".to_string()
    }
}

fn node_row(n: &NodeCapacity, errors: bool) -> Vec<String> {
    let mut row = vec![
        n.name.clone(),
        count(n.owned_cells),
        count(n.resident_cells),
        count(n.capacity_waiting),
        count(n.activation_waiting),
        count(n.restoring),
        yes_no(n.pressured).to_string(),
        yes_no(n.memory_headroom).to_string(),
        rss(n.rss_bytes),
    ];
    if errors {
        row.push(n.error.clone().unwrap_or_default());
    }
    row
}

/// The table of the nodes and their total, indented by `indent`. PRESSURED and HEADROOM of the
/// total count the nodes read (pressured ones, ones with headroom).
pub fn table(c: &CapacityStatus, indent: &str) -> String {
    let errors = c.nodes.iter().any(|n| n.error.is_some());
    let mut headers = vec![
        "NAME",
        "OWNED",
        "RESIDENT",
        "WAITING",
        "ACTIVATION WAITING",
        "RESTORING",
        "PRESSURED",
        "HEADROOM",
        "RSS",
    ];
    if errors {
        headers.push("ERROR");
    }
    let mut t = Table::new(&headers);
    for n in &c.nodes {
        t.row(node_row(n, errors));
    }
    let total = &c.total;
    t.row(vec![
        "TOTAL".to_string(),
        count(total.owned_cells),
        count(total.resident_cells),
        count(total.capacity_waiting),
        count(total.activation_waiting),
        count(total.restoring),
        of_read(c, Signal::Pressured, total.pressured_nodes),
        of_read(
            c,
            Signal::MemoryHeadroom,
            total.nodes_read - total.nodes_without_headroom,
        ),
        rss(total.rss_bytes),
    ]);
    t.render(indent)
}

/// The Autoscaling field: bounds, desired and current nodes, the last decision, what holds,
/// the signals' start, and the conditions that are not True.
pub fn render_autoscaling(a: &AutoscalingReport, now: Timestamp) -> String {
    let bounds = format!("{} to {} nodes", a.spec.min_replicas, a.spec.max_replicas);
    let mut lines = Vec::new();
    match &a.observed {
        None => lines.push(format!("{bounds}; no decision reported yet")),
        Some(o) => {
            lines.push(format!(
                "{bounds}; desired {}, current {}",
                o.desired_replicas, o.current_replicas
            ));
            lines.push(match &o.last_decision {
                Some(d) => format!(
                    "last scale:   {} to {} nodes {}, {}: {}",
                    d.from,
                    d.to,
                    ago(&d.time, now),
                    d.reason,
                    d.message
                ),
                None => "last scale:   none yet".to_string(),
            });
            if let Some(h) = &o.holding {
                lines.push(format!("holding:      {}: {}", h.reason, h.message));
            }
            let signals: Vec<String> = [
                ("to add nodes", &o.scale_up_signal_since),
                ("to remove a node", &o.scale_down_signal_since),
            ]
            .into_iter()
            .filter_map(|(what, since)| {
                since
                    .as_deref()
                    .map(|t| format!("{what} since {}", ago(t, now)))
            })
            .collect();
            if !signals.is_empty() {
                lines.push(format!("signals:      {}", signals.join("; ")));
            }
        }
    }
    for c in a.conditions.iter().filter(|c| c.status != "True") {
        lines.push(format!(
            "{:<14}{} {}: {}",
            format!("{}:", c.type_),
            c.status,
            c.reason,
            c.message
        ));
    }
    lines.join("\n")
}
