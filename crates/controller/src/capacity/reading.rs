//! One reading of a fleet's capacity: what each node's `GET /state` answered, summed the way
//! status.capacity and the gauges show it, and whether it differs enough from the one shown to
//! be written. Pure.

use celld_api::contract::node_api::NodeState;
use celld_api::{CapacityStatus, CapacityTotals, CelldFleet, NodeCapacity};
use k8s_openapi::jiff::Timestamp;

/// A count moves the status when it changes by more than this share of the larger value.
const MOVES_BY: f64 = 0.1;

/// What a fleet's nodes answered at one time, in ordinal order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetReading {
    /// When the nodes were read.
    pub read_at: Timestamp,
    /// Each node's capacity, or the error reading it met (`error` set, nothing else).
    pub nodes: Vec<NodeCapacity>,
}

/// A field a node reports: its name in `/state` and how to find it in a node's capacity.
struct Field {
    name: &'static str,
    reported: fn(&NodeCapacity) -> bool,
}

/// The fields the operator reads from every node, in the order `unreported` names them.
const FIELDS: [Field; 6] = [
    Field {
        name: "capacity_waiting",
        reported: |n| n.capacity_waiting.is_some(),
    },
    Field {
        name: "activation_waiting",
        reported: |n| n.activation_waiting.is_some(),
    },
    Field {
        name: "owned_cells",
        reported: |n| n.owned_cells.is_some(),
    },
    Field {
        name: "node_load.pressured",
        reported: |n| n.pressured.is_some(),
    },
    Field {
        name: "node_load.memory_headroom",
        reported: |n| n.memory_headroom.is_some(),
    },
    Field {
        name: "node_load.rss_bytes",
        reported: |n| n.rss_bytes.is_some(),
    },
];

impl FleetReading {
    /// The nodes whose state was read.
    pub fn answered(&self) -> impl Iterator<Item = &NodeCapacity> {
        self.nodes.iter().filter(|n| n.error.is_none())
    }

    /// The sums over the nodes that answered; a sum is absent when no node reports its field.
    pub fn totals(&self) -> CapacityTotals {
        let sum = |f: fn(&NodeCapacity) -> Option<u64>| {
            self.answered()
                .filter_map(f)
                .fold(None, |acc: Option<u64>, v| {
                    Some(acc.unwrap_or(0).saturating_add(v))
                })
        };
        let count = |f: fn(&NodeCapacity) -> bool| {
            i32::try_from(self.answered().filter(|n| f(n)).count()).unwrap_or(i32::MAX)
        };
        CapacityTotals {
            nodes_read: count(|_| true),
            nodes_unreadable: i32::try_from(
                self.nodes.iter().filter(|n| n.error.is_some()).count(),
            )
            .unwrap_or(i32::MAX),
            owned_cells: sum(|n| n.owned_cells),
            resident_cells: sum(|n| n.resident_cells),
            capacity_waiting: sum(|n| n.capacity_waiting),
            activation_waiting: sum(|n| n.activation_waiting),
            restoring: sum(|n| n.restoring),
            pressured_nodes: count(|n| n.pressured == Some(true)),
            nodes_without_headroom: count(|n| n.memory_headroom == Some(false)),
            rss_bytes: sum(|n| n.rss_bytes),
        }
    }

    /// The fields some node that answered does not report (celld before v0.5.0 reports none of
    /// the capacity signals).
    pub fn unreported(&self) -> Vec<String> {
        FIELDS
            .iter()
            .filter(|f| self.answered().any(|n| !(f.reported)(n)))
            .map(|f| f.name.to_string())
            .collect()
    }

    /// The reading as status.capacity shows it.
    pub fn to_status(&self) -> CapacityStatus {
        CapacityStatus {
            read_at: self.read_at.to_string(),
            total: self.totals(),
            nodes: self.nodes.clone(),
            unreported: self.unreported(),
        }
    }
}

/// The capacity of node `name` as its `state` reports it: each field from where its release
/// reports it (the top level, else the load block, else v0.4's names), absent where it reports
/// none.
pub fn node_capacity(name: &str, state: &NodeState) -> NodeCapacity {
    let load = state.node_load.clone().unwrap_or_default();
    NodeCapacity {
        name: name.to_string(),
        owned_cells: state.owned_cells.or(load.owned_cells),
        resident_cells: state.occupied.or(load.resident_cells).or(state.residents),
        capacity_waiting: state.capacity_waiting,
        activation_waiting: state.activation_waiting,
        restoring: Some(state.restoring),
        pressured: load.pressured,
        memory_headroom: load.memory_headroom,
        rss_bytes: load.rss_bytes.or(state.rss),
        error: None,
    }
}

/// The capacity of node `name` whose state could not be read, and why.
pub fn unreadable(name: &str, why: String) -> NodeCapacity {
    NodeCapacity {
        name: name.to_string(),
        error: Some(why),
        ..NodeCapacity::default()
    }
}

/// How long the capacity shown in the status of a fleet without spec.autoscaling stands when
/// only its counts moved (and, while none is shown, how old the fleet is before one is): a
/// fleet's periodic full reconcile writes it then. Its gauges are current all along.
pub const COUNTS_STAND_FOR: std::time::Duration = std::time::Duration::from_secs(300);

/// The signals a status reader acts on: activations waiting, a pressured node, a node without
/// memory headroom, a node that could not be read (not while the operator is `cut_off` from
/// every node: that tells of the operator's network, which it says once for itself, not of the
/// fleet).
fn flags(nodes: &[NodeCapacity], cut_off: bool) -> [bool; 4] {
    [
        nodes
            .iter()
            .any(|n| n.capacity_waiting.is_some_and(|w| w > 0)),
        nodes.iter().any(|n| n.pressured == Some(true)),
        nodes.iter().any(|n| n.memory_headroom == Some(false)),
        !cut_off && nodes.iter().any(|n| n.error.is_some()),
    ]
}

/// Whether `new`, a reading of a fleet without spec.autoscaling created at `created`, is worth
/// a status write at `now` against `shown`: when one of its signals turned on or off at once;
/// when only counts moved, once `shown` (or, with nothing shown, the fleet) is
/// [`COUNTS_STAND_FOR`] old. The first readings of a thousand starting fleets so cost no write
/// while they converge. A node that could not be read is no signal while the operator is
/// `cut_off` from every node.
pub fn worth_showing(
    shown: Option<&CapacityStatus>,
    new: &FleetReading,
    created: Option<Timestamp>,
    now: Timestamp,
    cut_off: bool,
) -> bool {
    let stood = |since: Option<Timestamp>| {
        since.is_none_or(|t| {
            now.duration_since(t)
                .try_into()
                .is_ok_and(|d: std::time::Duration| d >= COUNTS_STAND_FOR)
        })
    };
    match shown {
        Some(s) => {
            flags(&s.nodes, cut_off) != flags(&new.nodes, cut_off)
                || stood(s.read_at.parse::<Timestamp>().ok())
        }
        None => flags(&new.nodes, cut_off) != [false; 4] || stood(created),
    }
}

/// Whether `fleet`'s status would show `reading` at `now`: with spec.autoscaling, every
/// reading; without, one [worth showing](worth_showing) (with the operator `cut_off` from every
/// node or not) that [differs] from the one shown. A reading it would not show neither wakes
/// the fleet nor unsettles it.
pub fn shown_in_status(
    fleet: &CelldFleet,
    reading: &FleetReading,
    now: Timestamp,
    cut_off: bool,
) -> bool {
    if fleet.spec.autoscaling.is_some() {
        return true;
    }
    let shown = fleet.status.as_ref().and_then(|s| s.capacity.as_ref());
    shown.is_none_or(|s| differs(&s.nodes, &reading.nodes))
        && worth_showing(
            shown,
            reading,
            fleet.metadata.creation_timestamp.as_ref().map(|t| t.0),
            now,
            cut_off,
        )
}

/// Whether `new` differs enough from `shown` to replace it: another node list, a node that
/// turned readable or not, a flag or a field that appeared or went, or a count that moved by
/// more than a tenth (any move of a count from or to 0).
pub fn differs(shown: &[NodeCapacity], new: &[NodeCapacity]) -> bool {
    shown.len() != new.len() || shown.iter().zip(new).any(|(a, b)| node_differs(a, b))
}

fn node_differs(a: &NodeCapacity, b: &NodeCapacity) -> bool {
    a.name != b.name
        || a.error.is_some() != b.error.is_some()
        || a.pressured != b.pressured
        || a.memory_headroom != b.memory_headroom
        || [
            (a.owned_cells, b.owned_cells),
            (a.resident_cells, b.resident_cells),
            (a.capacity_waiting, b.capacity_waiting),
            (a.activation_waiting, b.activation_waiting),
            (a.restoring, b.restoring),
            (a.rss_bytes, b.rss_bytes),
        ]
        .into_iter()
        .any(|(x, y)| count_moved(x, y))
}

fn count_moved(a: Option<u64>, b: Option<u64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) if x == y => false,
        (Some(0), Some(_)) | (Some(_), Some(0)) => true,
        (Some(x), Some(y)) => x.abs_diff(y) as f64 > MOVES_BY * x.max(y) as f64,
        (None, None) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn node(name: &str, waiting: u64, headroom: bool, rss: u64) -> NodeCapacity {
        NodeCapacity {
            name: name.into(),
            owned_cells: Some(100),
            resident_cells: Some(10),
            capacity_waiting: Some(waiting),
            activation_waiting: Some(0),
            restoring: Some(0),
            pressured: Some(false),
            memory_headroom: Some(headroom),
            rss_bytes: Some(rss),
            error: None,
        }
    }

    fn unreadable(name: &str) -> NodeCapacity {
        NodeCapacity {
            name: name.into(),
            error: Some("connection refused".into()),
            ..NodeCapacity::default()
        }
    }

    #[test]
    fn reads_capacity_from_where_each_release_reports_it() {
        let v06 = node_capacity("web-0", &NodeState::parse(
            br#"{"owned_cells":12,"occupied":3,"capacity_waiting":4,"activation_waiting":1,"restoring":2,
                "node_load":{"pressured":true,"memory_headroom":false,"rss_bytes":5000,"owned_cells":11}}"#,
        )
        .unwrap());
        assert_eq!(
            v06,
            NodeCapacity {
                name: "web-0".into(),
                owned_cells: Some(12),
                resident_cells: Some(3),
                capacity_waiting: Some(4),
                activation_waiting: Some(1),
                restoring: Some(2),
                pressured: Some(true),
                memory_headroom: Some(false),
                rss_bytes: Some(5000),
                error: None,
            }
        );
        let v04 = node_capacity(
            "web-1",
            &NodeState::parse(br#"{"restoring":0,"residents":7,"rss":9000}"#).unwrap(),
        );
        assert_eq!(
            (
                v04.resident_cells,
                v04.rss_bytes,
                v04.capacity_waiting,
                v04.memory_headroom
            ),
            (Some(7), Some(9000), None, None)
        );
        let odd = node_capacity("web-2", &NodeState::parse(
            br#"{"restoring":0,"capacity_waiting":"many","owned_cells":-1,"node_load":{"pressured":"yes"}}"#,
        )
        .unwrap());
        assert_eq!(
            (odd.capacity_waiting, odd.owned_cells, odd.pressured),
            (None, None, None),
            "a value in another shape is not reported, never 0"
        );
    }

    #[test]
    fn sums_what_the_nodes_that_answered_report() {
        let reading = FleetReading {
            read_at: Timestamp::UNIX_EPOCH,
            nodes: vec![
                node("web-0", 3, true, 1000),
                node("web-1", 0, false, 500),
                unreadable("web-2"),
            ],
        };
        let t = reading.totals();
        assert_eq!((t.nodes_read, t.nodes_unreadable), (2, 1));
        assert_eq!(t.capacity_waiting, Some(3));
        assert_eq!(t.rss_bytes, Some(1500));
        assert_eq!(t.owned_cells, Some(200));
        assert_eq!((t.pressured_nodes, t.nodes_without_headroom), (0, 1));
        assert!(reading.unreported().is_empty());
        let status = reading.to_status();
        assert_eq!(status.read_at, "1970-01-01T00:00:00Z");
        assert_eq!(status.nodes.len(), 3);
    }

    #[test]
    fn names_the_fields_an_older_celld_does_not_report() {
        let v04 = NodeCapacity {
            name: "web-0".into(),
            resident_cells: Some(4),
            restoring: Some(0),
            rss_bytes: Some(10),
            ..NodeCapacity::default()
        };
        let reading = FleetReading {
            read_at: Timestamp::UNIX_EPOCH,
            nodes: vec![v04],
        };
        assert_eq!(
            reading.unreported(),
            [
                "capacity_waiting",
                "activation_waiting",
                "owned_cells",
                "node_load.pressured",
                "node_load.memory_headroom"
            ]
        );
        assert_eq!(reading.totals().capacity_waiting, None, "never read as 0");
    }

    #[test]
    fn a_small_move_of_a_count_is_not_worth_a_write_a_signal_is() {
        let shown = vec![node("web-0", 0, true, 1000)];
        assert!(!differs(&shown, &[node("web-0", 0, true, 1090)]));
        assert!(differs(&shown, &[node("web-0", 0, true, 1200)]));
        assert!(differs(&shown, &[node("web-0", 1, true, 1000)]), "0 → 1");
        assert!(differs(&shown, &[node("web-0", 0, false, 1000)]));
        assert!(differs(&shown, &[unreadable("web-0")]));
        assert!(differs(
            &shown,
            &[node("web-0", 0, true, 1000), node("web-1", 0, true, 1)]
        ));
        assert!(!differs(&shown, &shown.clone()));
    }

    #[test]
    fn a_fleet_without_autoscaling_shows_signals_at_once_and_counts_when_they_stood() {
        let at = |s: i64| Timestamp::from_second(s).unwrap();
        let reading = |waiting: u64, rss: u64| FleetReading {
            read_at: at(1_000),
            nodes: vec![node("web-0", waiting, true, rss)],
        };
        let quiet = reading(0, 100);
        // Nothing shown: a young fleet waits, an old one shows, a signal shows at once.
        assert!(!worth_showing(
            None,
            &quiet,
            Some(at(900)),
            at(1_000),
            false
        ));
        assert!(worth_showing(None, &quiet, Some(at(600)), at(1_000), false));
        assert!(worth_showing(
            None,
            &reading(3, 100),
            Some(at(900)),
            at(1_000),
            false
        ));
        // Something shown: counts wait until it stood, signals do not.
        let shown = quiet.to_status();
        assert!(!worth_showing(
            Some(&shown),
            &reading(0, 200),
            Some(at(0)),
            at(1_100),
            false
        ));
        assert!(worth_showing(
            Some(&shown),
            &reading(0, 200),
            Some(at(0)),
            at(1_300),
            false
        ));
        assert!(worth_showing(
            Some(&shown),
            &reading(2, 100),
            Some(at(0)),
            at(1_010),
            false
        ));
        // A node that could not be read is a signal, but not while the operator reaches no
        // node at all: then only counts that stood are shown.
        let unread = FleetReading {
            read_at: at(1_000),
            nodes: vec![unreadable("web-0")],
        };
        assert!(worth_showing(
            None,
            &unread,
            Some(at(900)),
            at(1_000),
            false
        ));
        assert!(!worth_showing(
            None,
            &unread,
            Some(at(900)),
            at(1_000),
            true
        ));
        assert!(worth_showing(None, &unread, Some(at(600)), at(1_000), true));
        assert!(!worth_showing(
            Some(&unread.to_status()),
            &unread,
            Some(at(0)),
            at(1_010),
            true
        ));
    }

    #[test]
    fn a_reading_the_status_would_not_show_leaves_a_fleet_without_autoscaling_alone() {
        let at = |s: i64| Timestamp::from_second(s).unwrap();
        let mut fleet = crate::children::fixtures::fleet(crate::children::fixtures::MINIMAL);
        fleet.metadata.creation_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at(900)),
        );
        let reading = |waiting: u64, rss: u64| FleetReading {
            read_at: at(1_000),
            nodes: vec![node("web-0", waiting, true, rss)],
        };
        // A young fleet: quiet counts wait, a signal shows.
        assert!(!shown_in_status(&fleet, &reading(0, 100), at(1_000), false));
        assert!(shown_in_status(&fleet, &reading(4, 100), at(1_000), false));
        // Shown long ago: the same reading is nothing new, a moved one is.
        fleet.status = Some(celld_api::CelldFleetStatus {
            capacity: Some(reading(0, 100).to_status()),
            ..Default::default()
        });
        assert!(!shown_in_status(&fleet, &reading(0, 100), at(2_000), false));
        assert!(shown_in_status(&fleet, &reading(0, 500), at(2_000), false));
        // With spec.autoscaling every reading counts.
        fleet.spec.autoscaling =
            Some(serde_json::from_value(serde_json::json!({"maxReplicas": 4})).unwrap());
        assert!(shown_in_status(&fleet, &reading(0, 100), at(2_000), false));
    }
}
