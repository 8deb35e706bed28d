//! Ready: whether the fleet serves, or the first thing that keeps it from serving.

use super::{Cond, NodeCounts, cond};
use crate::fleet::status::observation::{Observed, ObservedStorage};
use celld_api::conditions::READY;
use celld_api::reasons::Reason;

/// The Ready condition, given the `nodes` and whether the route is ready (`route_ok`).
pub fn condition(o: &Observed, nodes: &NodeCounts, route_ok: bool) -> Cond {
    let ready = nodes.ready;
    if !matches!(o.storage, ObservedStorage::Resolved(..)) {
        cond(
            READY,
            Some(false),
            Reason::StorageUnresolved,
            "the object storage does not resolve; see the StorageResolved condition",
        )
    } else if let Some(f) = o.failures.iter().find(|f| f.is_any_child()) {
        cond(
            READY,
            Some(false),
            f.reason,
            format!(
                "the operator could not reconcile {}; see the Degraded condition",
                f.subject
            ),
        )
    } else if let Some(s) = o
        .source
        .as_deref()
        .map(|s| &s.synced)
        .filter(|s| s.status == Some(false) && s.reason != Reason::Suspended)
    {
        cond(
            READY,
            Some(false),
            s.reason,
            format!(
                "the bucket does not serve spec.source's revision yet: {}",
                s.message
            ),
        )
    } else if nodes.held {
        cond(
            READY,
            Some(false),
            Reason::NoDeployment,
            "no Worker is deployed yet; see the Deployed condition",
        )
    } else if o.desired == 0 {
        // As a Deployment scaled to 0 stays Available: the fleet is what its spec asks.
        cond(
            READY,
            Some(true),
            Reason::ScaledToZero,
            "spec.replicas is 0: no node runs, as the spec asks",
        )
    } else if !route_ok {
        cond(
            READY,
            Some(false),
            Reason::RouteNotReady,
            "see the RouteReady condition",
        )
    } else if ready < o.desired {
        cond(
            READY,
            Some(false),
            Reason::NodesNotReady,
            format!("{ready}/{} nodes ready", o.desired),
        )
    } else {
        cond(
            READY,
            Some(true),
            Reason::Serving,
            format!("{ready}/{} nodes ready", o.desired),
        )
    }
}
