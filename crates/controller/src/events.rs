//! Events on fleets, published only for meaningful changes: children applied or pruned, and
//! conditions that changed status or reason.

use crate::context::Context;
use crate::pointer::Pointer;
use celld_api::{CelldFleet, CelldFleetStatus, conditions};
use kube::Resource;
use kube::runtime::events::{Event, EventType};
use tracing::warn;

async fn publish(ctx: &Context, fleet: &CelldFleet, type_: EventType, reason: &str, note: String) {
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&event, &fleet.object_ref(&())).await {
        warn!(error = %e, reason, "publishing an Event failed");
    } else {
        ctx.metrics.write("Event", "create");
    }
}

/// An Event listing the children created, changed or pruned.
pub async fn applied(ctx: &Context, fleet: &CelldFleet, changed: &[String], pruned: &[String]) {
    if !changed.is_empty() {
        publish(
            ctx,
            fleet,
            EventType::Normal,
            "Applied",
            format!("applied {}", changed.join(", ")),
        )
        .await;
    }
    if !pruned.is_empty() {
        publish(
            ctx,
            fleet,
            EventType::Normal,
            "Pruned",
            format!("deleted {} (no longer in the spec)", pruned.join(", ")),
        )
        .await;
    }
}

/// Events for every condition whose status or reason changed, and for a new Worker version.
pub async fn transitions(
    ctx: &Context,
    fleet: &CelldFleet,
    previous: Option<&CelldFleetStatus>,
    status: &CelldFleetStatus,
    pointer: Option<&Pointer>,
) {
    let before = previous.map_or(&[][..], |p| p.conditions.as_slice());
    for c in &status.conditions {
        // Progressing flips on every rollout; a Ready=False that only points at another
        // condition (storage, deployment, route) would repeat that condition's own Event.
        let echo = c.type_ == conditions::READY
            && ["StorageUnresolved", "NoDeployment", "RouteNotReady"].contains(&c.reason.as_str());
        if c.type_ == conditions::PROGRESSING || echo {
            continue;
        }
        let old = conditions::find(before, &c.type_);
        if old.is_some_and(|o| o.status == c.status && o.reason == c.reason) {
            continue;
        }
        // Nodes not ready yet is what a rollout looks like, not a fault.
        let bad = if c.type_ == conditions::DEGRADED {
            c.status == "True"
        } else {
            c.status == "False" && c.reason != "NodesNotReady"
        };
        if old.is_none() && !bad {
            continue;
        }
        let type_ = if bad {
            EventType::Warning
        } else {
            EventType::Normal
        };
        publish(
            ctx,
            fleet,
            type_,
            &c.reason,
            format!("{}: {}", c.type_, c.message),
        )
        .await;
    }
    if let Some(Pointer::Deployed(d)) = pointer {
        let old = previous
            .and_then(|p| p.deployment.as_ref())
            .map(|d| d.version.as_str());
        if old.is_some_and(|v| v != d.version) {
            publish(
                ctx,
                fleet,
                EventType::Normal,
                "WorkerVersionChanged",
                format!("the fleet now serves Worker version {}", d.version),
            )
            .await;
        }
    }
}
