//! Whether the operator reaches the nodes' API at all. An operator run from a workstation, or
//! whose pods a NetworkPolicy or the CNI keeps from the nodes' port, connects to no node of any
//! fleet: that is one cause, said once for the operator (a log line when it starts and when it
//! ends, the `celld_operator_nodes_unreachable` gauge), not a Warning per fleet. While it
//! lasts, a reconcile does not wait for a reading of its nodes ([`Reachability::cut_off`]).
//! Every state read is counted here, by reader and result.

use crate::locks::lock;
use crate::metrics::Metrics;
use crate::nodes::unanswered::Unanswered;
use celld_api::contract::INTERNAL_PORT;
use std::fmt::Display;
use std::sync::{Arc, Mutex};
use tracing::{debug, info, warn};

/// Connections to nodes in a row that failed, with none made since, before the operator
/// takes itself as cut off from the nodes: a dozen is several fleets, or one fleet's nodes
/// several times.
pub const FAILURES_TO_CUT_OFF: u32 = 12;

/// Who reads a node's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The capacity reader.
    Capacity,
    /// A fleet's reconcile: for status.nodes, the Adopted condition and upgrades.
    Reconcile,
}

impl Reader {
    fn label(self) -> &'static str {
        match self {
            Self::Capacity => "capacity",
            Self::Reconcile => "reconcile",
        }
    }
}

/// The connections to nodes that failed in a row, and whether the operator said it is cut
/// off; counted into the operator's metrics when it has them.
#[derive(Default)]
pub struct Reachability {
    seen: Mutex<Seen>,
    metrics: Option<Arc<Metrics>>,
}

impl std::fmt::Debug for Reachability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reachability")
            .field("seen", &self.seen)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Seen {
    failed_in_row: u32,
    cut_off: bool,
}

impl Reachability {
    /// A reachability counted into `metrics`.
    pub fn counted(metrics: Arc<Metrics>) -> Self {
        Self {
            seen: Mutex::default(),
            metrics: Some(metrics),
        }
    }

    /// Whether the last [`FAILURES_TO_CUT_OFF`] connections to nodes, or more, failed and none
    /// was made since.
    pub fn cut_off(&self) -> bool {
        lock(&self.seen).cut_off
    }

    /// Takes in one state read of the node at `address` by `reader`: answered, or why not
    /// and the error that said so.
    pub fn record(
        &self,
        reader: Reader,
        address: &str,
        failed: Option<(Unanswered, &dyn Display)>,
    ) {
        let result = match failed {
            None => "ok",
            Some((why, _)) => match why {
                Unanswered::Unreachable => "unreachable",
                Unanswered::Silent => "silent",
                Unanswered::ErrorStatus(_) | Unanswered::NotState => "bad_answer",
            },
        };
        if let Some(metrics) = &self.metrics {
            metrics.node_state_read(reader.label(), result);
        }
        if let Some((_, e)) = failed {
            debug!(node = address, error = %e, "a node's state could not be read");
        }
        let reached = !matches!(failed, Some((Unanswered::Unreachable, _)));
        let turned = {
            let mut seen = lock(&self.seen);
            seen.failed_in_row = if reached {
                0
            } else {
                seen.failed_in_row.saturating_add(1)
            };
            let cut_off = seen.failed_in_row >= FAILURES_TO_CUT_OFF;
            let turned = cut_off != seen.cut_off;
            seen.cut_off = cut_off;
            turned.then_some(cut_off)
        };
        match (turned, failed) {
            (Some(true), Some((_, e))) => warn!(
                "the operator cannot reach the nodes' API: the last {FAILURES_TO_CUT_OFF} connections to nodes failed, the last one with «{e}». The fleets' Adopted conditions stay Unknown (NodeStateUnreadable) and each node in status.nodes says it cannot be reached until the operator reaches port {INTERNAL_PORT} of the celld pods: run it in the cluster, let its pods through the fleets' NetworkPolicies and the CNI, or point --node-api-connect-to at a forwarding proxy"
            ),
            (Some(false), _) => info!("the operator reaches the nodes' API again"),
            _ => {}
        }
        if let (Some(cut_off), Some(metrics)) = (turned, &self.metrics) {
            metrics.set_nodes_unreachable(cut_off);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable() -> Option<(Unanswered, &'static dyn Display)> {
        Some((Unanswered::Unreachable, &"no such host"))
    }

    fn silent() -> Option<(Unanswered, &'static dyn Display)> {
        Some((Unanswered::Silent, &"did not answer within 3s"))
    }

    #[test]
    fn a_dozen_failed_connections_in_a_row_cut_off_and_one_made_ends_it() {
        let metrics = Arc::new(Metrics::default());
        let reach = Reachability::counted(metrics.clone());
        for _ in 1..FAILURES_TO_CUT_OFF {
            reach.record(Reader::Reconcile, "web-0", unreachable());
        }
        assert!(!reach.cut_off(), "one failure short");
        // A node that took the connection, even without answering, was reached.
        reach.record(Reader::Capacity, "web-0", silent());
        for _ in 1..FAILURES_TO_CUT_OFF {
            reach.record(Reader::Reconcile, "web-0", unreachable());
        }
        assert!(
            !reach.cut_off(),
            "the count starts again after a connection"
        );
        reach.record(Reader::Reconcile, "web-0", unreachable());
        assert!(reach.cut_off());
        let text = metrics.encode();
        assert!(
            text.contains("celld_operator_nodes_unreachable 1"),
            "{text}"
        );
        assert!(
            text.contains(
                r#"celld_operator_node_state_reads_total{reader="reconcile",result="unreachable"} 23"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"celld_operator_node_state_reads_total{reader="capacity",result="silent"} 1"#
            ),
            "{text}"
        );

        reach.record(Reader::Capacity, "web-0", None);
        assert!(!reach.cut_off());
        let text = metrics.encode();
        assert!(
            text.contains("celld_operator_nodes_unreachable 0"),
            "{text}"
        );
        assert_eq!(metrics.node_state_reads(), 2, "the capacity reader's");
    }
}
