//! The rows of `top`: one fleet each, from its spec and status only, in the order asked for
//! (by pressure unless told otherwise), and their table. Fleets whose nodes were never read
//! come last whatever the order. Pure: the time is an argument.

use crate::cluster::capacity::{self, Signal, count};
use crate::text::human;
use crate::text::table::Table;
use celld_api::{CapacityTotals, CelldFleet, ScaleHold};
use clap::ValueEnum;
use jiff::Timestamp;
use serde::Serialize;
use std::cmp::{Ordering, Reverse};

/// The order of the fleets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum SortBy {
    /// Activations waiting for capacity, then pressured nodes, then nodes without memory
    /// headroom, most first
    #[default]
    Pressure,
    /// Resident memory of the nodes, most first
    Rss,
    /// Cells the nodes own, most first
    Cells,
    /// Name
    Name,
}

/// One fleet in `top`; also the `-o yaml|json` form of a row.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TopRow {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Ready nodes.
    pub ready_replicas: i32,
    /// Nodes that exist (status.replicas).
    pub replicas: i32,
    /// The nodes the fleet should run: the autoscaler's decision, else spec.replicas.
    pub desired_replicas: i32,
    /// spec.autoscaling's bounds, for an autoscaled fleet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Bounds>,
    /// What the nodes last reported, summed; absent until the operator has read them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySummary>,
    /// Why the autoscaler does not change the number of nodes now, when something holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holding: Option<ScaleHold>,
}

/// spec.autoscaling's bounds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bounds {
    /// The fewest nodes.
    pub min_replicas: i32,
    /// The most nodes.
    pub max_replicas: i32,
}

/// status.capacity without the nodes.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacitySummary {
    /// When the numbers were read (RFC 3339).
    pub read_at: String,
    /// The sums over the nodes that answered.
    pub total: CapacityTotals,
    /// Fields the nodes' celld release does not report.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreported: Vec<String>,
    /// Whether the nodes report whether they are pressured.
    #[serde(skip)]
    pub pressure_reported: bool,
    /// Whether the nodes report whether they have memory headroom.
    #[serde(skip)]
    pub headroom_reported: bool,
}

/// The `-o yaml|json` document of `top`.
#[derive(Debug, Serialize)]
pub struct TopList {
    /// The rows, in the order asked for.
    pub fleets: Vec<TopRow>,
}

/// The row of `fleet`.
pub fn row(fleet: &CelldFleet) -> TopRow {
    let status = fleet.status.as_ref();
    TopRow {
        namespace: fleet.metadata.namespace.clone().unwrap_or_default(),
        name: fleet.metadata.name.clone().unwrap_or_default(),
        ready_replicas: status.map_or(0, |s| s.ready_replicas),
        replicas: status.map_or(0, |s| s.replicas),
        desired_replicas: capacity::desired_replicas(fleet),
        autoscaling: fleet.spec.autoscaling.as_ref().map(|a| Bounds {
            min_replicas: a.min_replicas,
            max_replicas: a.max_replicas,
        }),
        capacity: status
            .and_then(|s| s.capacity.as_ref())
            .map(|c| CapacitySummary {
                read_at: c.read_at.clone(),
                total: c.total.clone(),
                unreported: c.unreported.clone(),
                pressure_reported: capacity::reported(c, Signal::Pressured),
                headroom_reported: capacity::reported(c, Signal::MemoryHeadroom),
            }),
        holding: fleet
            .spec
            .autoscaling
            .as_ref()
            .and(status)
            .and_then(|s| s.autoscaling.as_ref())
            .and_then(|a| a.holding.clone()),
    }
}

/// How hard a fleet is pressed: activations waiting for capacity, pressured nodes, nodes
/// without headroom; a signal the nodes do not report counts as none.
fn pressure(c: &CapacitySummary) -> (Option<u64>, i32, i32) {
    (
        c.total.capacity_waiting,
        if c.pressure_reported {
            c.total.pressured_nodes
        } else {
            0
        },
        if c.headroom_reported {
            c.total.nodes_without_headroom
        } else {
            0
        },
    )
}

fn by_name(a: &TopRow, b: &TopRow) -> Ordering {
    (&a.name, &a.namespace).cmp(&(&b.name, &b.namespace))
}

/// Sorts `rows` by `by`; ties by name, then namespace. Fleets without capacity come last.
pub fn sort(rows: &mut [TopRow], by: SortBy) {
    rows.sort_by(|a, b| {
        let (ca, cb) = match (&a.capacity, &b.capacity) {
            (Some(ca), Some(cb)) => (ca, cb),
            (Some(_), None) => return Ordering::Less,
            (None, Some(_)) => return Ordering::Greater,
            (None, None) => return by_name(a, b),
        };
        let first = match by {
            SortBy::Pressure => Reverse(pressure(ca)).cmp(&Reverse(pressure(cb))),
            SortBy::Rss => Reverse(ca.total.rss_bytes).cmp(&Reverse(cb.total.rss_bytes)),
            SortBy::Cells => Reverse((ca.total.owned_cells, ca.total.resident_cells))
                .cmp(&Reverse((cb.total.owned_cells, cb.total.resident_cells))),
            SortBy::Name => Ordering::Equal,
        };
        first.then_with(|| by_name(a, b))
    });
}

fn dash() -> String {
    "-".to_string()
}

/// `N/M` of the nodes read, `-` when the nodes do not report the signal.
fn of_read(reported: bool, n: i32, read: i32) -> String {
    if reported {
        format!("{n}/{read}")
    } else {
        dash()
    }
}

/// The table; with `namespaces` a NAMESPACE column comes first; `wide` adds the activations
/// waiting for a permit, the resident cells, the unreadable nodes and what holds the autoscaler.
pub fn render(rows: &[TopRow], namespaces: bool, wide: bool, now: Timestamp) -> String {
    let mut headers = vec![
        "NAME",
        "NODES",
        "DESIRED",
        "WAITING",
        "PRESSURED",
        "HEADROOM",
        "RESTORING",
        "OWNED",
        "RSS",
        "READ",
    ];
    if wide {
        headers.extend(["ACTIVATION WAITING", "RESIDENT", "UNREADABLE", "HOLDING"]);
    }
    if namespaces {
        headers.insert(0, "NAMESPACE");
    }
    let mut t = Table::new(&headers);
    for r in rows {
        let mut cells = vec![
            r.name.clone(),
            format!("{}/{}", r.ready_replicas, r.replicas),
            r.desired_replicas.to_string(),
        ];
        match &r.capacity {
            Some(c) => {
                let total = &c.total;
                cells.extend([
                    count(total.capacity_waiting),
                    of_read(c.pressure_reported, total.pressured_nodes, total.nodes_read),
                    of_read(
                        c.headroom_reported,
                        total.nodes_read - total.nodes_without_headroom,
                        total.nodes_read,
                    ),
                    count(total.restoring),
                    count(total.owned_cells),
                    total.rss_bytes.map_or_else(dash, human::bytes),
                    human::age_of(&c.read_at, now).unwrap_or_else(|| "<unknown>".to_string()),
                ]);
            }
            None => {
                cells.extend(std::iter::repeat_n(dash(), 6));
                cells.push("<not read>".to_string());
            }
        }
        if wide {
            match &r.capacity {
                Some(c) => cells.extend([
                    count(c.total.activation_waiting),
                    count(c.total.resident_cells),
                    c.total.nodes_unreadable.to_string(),
                ]),
                None => cells.extend(std::iter::repeat_n(dash(), 3)),
            }
            cells.push(r.holding.as_ref().map_or_else(dash, |h| h.reason.clone()));
        }
        if namespaces {
            cells.insert(0, r.namespace.clone());
        }
        t.row(cells);
    }
    t.render("")
}
