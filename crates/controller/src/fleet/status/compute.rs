//! The fleet's status, computed from what the reconcile observed and applied, one condition per
//! [builder](crate::fleet::status::conditions). Pure: the same observations give the same status, so
//! an unchanged fleet writes no status.

use crate::buckets::pointer::Pointer;
use crate::capacity::reading;
use crate::fleet::status::conditions::progressing::Deadline;
use crate::fleet::status::conditions::{
    NodeCounts, adopted, autoscaling, degraded, durability, kstatus, nodes_fencing, progressing,
    ready, route, settings_held, source_synced, storage,
};
use crate::fleet::status::observation::{Observed, ObservedStorage};
use celld_api::conditions;
use celld_api::{CelldFleetStatus, labels};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

/// Computes the status; `previous` keeps transition times and the last known deployment.
pub fn compute(
    previous: Option<&CelldFleetStatus>,
    o: &Observed,
    now: Timestamp,
) -> CelldFleetStatus {
    let sts_status = o.statefulset.and_then(|s| s.status.as_ref());
    let held = matches!(o.storage, ObservedStorage::Resolved(_, Pointer::Missing));
    let nodes = NodeCounts {
        replicas: sts_status.map_or(0, |s| s.replicas),
        ready: sts_status.and_then(|s| s.ready_replicas).unwrap_or(0),
        updated: sts_status.and_then(|s| s.updated_replicas).unwrap_or(0),
        current: o.statefulset.is_some_and(|s| {
            s.status.as_ref().and_then(|st| st.observed_generation) == s.metadata.generation
        }),
        target: if held { 0 } else { o.desired },
        held,
    };
    let ([resolved, deployed], mut deployment) = storage::conditions(previous, o);
    let adopted = adopted::condition(previous, o, &nodes);
    if let Some(d) = deployment.as_mut() {
        d.adopted = adopted.ratio;
        // Read in this reconcile: it answers the deploy the annotation stands for.
        if matches!(
            o.storage,
            ObservedStorage::Resolved(_, Pointer::Deployed(_))
        ) {
            d.observed_deployed_at = o.deployed_at.clone();
        }
    }
    let route = route::condition(o);
    let synced = source_synced::condition(o);
    let [autoscaling, idle_eviction] = autoscaling::conditions(o);
    let deadline = Deadline::new(o.progress_deadline_s, previous, o.generation, now);
    let progressing = progressing::condition(&o.upgrade, &nodes, &deadline, &o.holders);
    let held = settings_held::condition(o.held.as_deref());
    let degraded = degraded::condition(o, &route);
    let ready = ready::condition(o, &nodes, route.status == Some(true));
    let [reconciling, stalled] = kstatus::conditions(
        o,
        &kstatus::Basis {
            progressing: &progressing,
            adopted: &adopted.condition,
            ready: &ready,
            degraded: &degraded,
            deployed: &deployed,
            held: held.as_ref(),
            source: o.source.as_deref().map(|s| &s.synced),
        },
    );

    let prev: &[Condition] = previous.map_or(&[], |p| p.conditions.as_slice());
    CelldFleetStatus {
        observed_generation: o.generation,
        replicas: nodes.replicas,
        selector: Some(labels::node_selector_string(o.name)),
        ready_replicas: nodes.ready,
        updated_replicas: nodes.updated,
        url: o.url.clone(),
        storage: match &o.storage {
            ObservedStorage::Resolved(s, _) => Some(s.to_status()),
            ObservedStorage::Failed(..) => previous.and_then(|p| p.storage.clone()),
        },
        deployment,
        nodes: with_restarts(adopted.nodes, &o.fences),
        // A reconcile stopped by storage that does not resolve decides nothing about the
        // source: what was published stays recorded.
        source: match (o.source.as_deref(), &o.storage) {
            (Some(s), _) => Some(Box::new(s.status.clone())),
            (None, ObservedStorage::Failed(..)) => previous.and_then(|p| p.source.clone()),
            (None, ObservedStorage::Resolved(..)) => None,
        },
        // The reading shown stays until one differs from it enough to be worth a write.
        capacity: match (
            o.capacity.as_deref(),
            previous.and_then(|p| p.capacity.as_ref()),
        ) {
            (Some(r), Some(shown)) if !reading::differs(&shown.nodes, &r.nodes) => {
                Some(shown.clone())
            }
            (Some(r), _) => Some(r.to_status()),
            (None, shown) => shown.cloned(),
        },
        autoscaling: o
            .autoscale
            .as_deref()
            .map(|a| Box::new(a.scaled.status.clone())),
        conditions: [
            Some(resolved),
            Some(deployed),
            Some(adopted.condition),
            synced,
            Some(route),
            held,
            nodes_fencing::condition(&o.fences),
            Some(durability::condition(o.acknowledged)),
            Some(progressing),
            Some(degraded),
            Some(ready),
            Some(reconciling),
            Some(stalled),
            autoscaling,
            idle_eviction,
        ]
        .into_iter()
        .flatten()
        .map(|c| {
            conditions::make(
                prev,
                c.type_,
                c.status,
                c.reason.as_str(),
                c.message,
                o.generation,
                now,
            )
        })
        .collect(),
    }
}

/// `nodes`, each with its last exit among `exits` (the recent ones of the fleet's nodes).
fn with_restarts(
    mut nodes: Vec<celld_api::NodeStatus>,
    exits: &[crate::nodes::fences::Fence],
) -> Vec<celld_api::NodeStatus> {
    for node in &mut nodes {
        node.last_restart = exits
            .iter()
            .filter(|e| e.node == node.name)
            .max_by_key(|e| e.at)
            .map(|e| celld_api::NodeRestart {
                at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(e.at),
                exit_code: e.exit_code,
            });
    }
    nodes
}

#[cfg(test)]
mod tests;
