//! spec.autoscaling in a reconcile: the decision made from the fleet's last capacity reading,
//! the status the operator last wrote (the node count and last scale time it decided before),
//! the live StatefulSet (what the fleet is busy with) and the fleet's managedFields (who else
//! sets spec.replicas).

use crate::autoscale::busy::busy;
use crate::autoscale::contested::contested;
use crate::autoscale::decide::{Facts, Scaled, decide};
use crate::fleet::context::Context;
use crate::fleet::fleet_id::FleetId;
use celld_api::{CelldFleet, CelldFleetStatus};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;
use std::time::Duration;

/// A reading older than this many reading periods is too old to act on.
const STALE_AFTER_PERIODS: u32 = 3;

/// A reading is never too old to act on sooner than this after it was taken.
const STALE_AT_LEAST: Duration = Duration::from_secs(30);

/// What spec.autoscaling decides for `fleet` (None without it), given its `live` StatefulSet
/// and its `latest` status.
pub fn decided(
    ctx: &Context,
    fleet: &CelldFleet,
    id: &FleetId,
    live: Option<&StatefulSet>,
    latest: Option<&CelldFleetStatus>,
) -> Option<Scaled> {
    let policy = fleet.spec.autoscaling.as_ref()?;
    let tracked = ctx.nodes.capacity.get(&id.uid);
    let stale_after =
        (ctx.shared.settings.autoscale_interval * STALE_AFTER_PERIODS).max(STALE_AT_LEAST);
    let busy = busy(live, latest);
    let mut facts = Facts {
        policy,
        previous: latest.and_then(|s| s.autoscaling.as_deref()),
        spec_replicas: fleet.spec.replicas,
        current: live
            .and_then(|s| s.status.as_ref())
            .map_or(0, |s| s.replicas),
        tracked: tracked.as_ref(),
        stale: tracked
            .as_ref()
            .is_some_and(|t| t.taken.elapsed() > stale_after),
        busy: busy.as_ref(),
        contested: None,
        now: Timestamp::now(),
    };
    let scaled = decide(&facts);
    let Some(manager) = contested(fleet, scaled.desired) else {
        ctx.nodes
            .capacity
            .decided(&id.uid, scaled.paused, Some(scaled.desired));
        return Some(scaled);
    };
    facts.contested = Some(&manager);
    let scaled = decide(&facts);
    ctx.nodes
        .capacity
        .decided(&id.uid, scaled.paused, Some(scaled.desired));
    Some(scaled)
}
