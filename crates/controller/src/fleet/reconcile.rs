//! One reconcile of one fleet, as one pipeline: read its [inputs](crate::fleet::inputs) → build
//! the [plan](crate::fleet::plan) (pure) → [apply](crate::fleet::apply_plan) it and prune what it
//! no longer holds → [observe](crate::fleet::observe) what was read and done → publish it through
//! the one [status writer](crate::fleet::status::write). Whatever fails along the way ends in the status
//! (Degraded, with a typed reason), one Warning Event and the failure metric, all from the
//! writer, before the reconcile returns an error for a retry.

use crate::buckets::pointer::Pointer;
use crate::cache::caches;
use crate::children::Desired;
use crate::error::Error;
use crate::failure::Failure;
use crate::fleet::context::Context;
use crate::fleet::inputs::{self, FleetId, Gathered, Inputs};
use crate::fleet::next_look::{Facts, next_look};
use crate::fleet::{apply_plan, observe, plan, settled, source_step};
use crate::shared::resync_grid;
use crate::shared::retry;
use celld_api::{CelldFleet, ResolveError};
use k8s_openapi::jiff::Timestamp;
use kube::core::DeserializeGuard;
use kube::runtime::controller::Action;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::{info, warn};

/// The longest a new fleet whose pods waited for its public Service waits for them to be ready
/// before its first status.
const FIRST_STATUS_WAIT: Duration = Duration::from_secs(5);

/// The controller's reconcile entry point.
pub async fn reconcile(
    guard: Arc<DeserializeGuard<CelldFleet>>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let Some(fleet) = retry::parsed(&guard) else {
        return Ok(Action::await_change());
    };
    let Some(id) = FleetId::of(fleet) else {
        warn!(name = ?fleet.metadata.name, "a CelldFleet without namespace or uid; waiting for it to change");
        return Ok(Action::await_change());
    };
    if fleet.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let started = Instant::now();
    let result = reconcile_fleet(fleet, &id, &ctx).await;
    ctx.shared
        .metrics
        .reconciled(result.is_ok(), started.elapsed().as_secs_f64());
    retry::settle(&ctx.shared, ctx.status.writer(), fleet, &result).await;
    result
}

/// The key of a fleet in logs: namespace/name.
fn key(id: &FleetId) -> String {
    format!("{}/{}", id.namespace, id.name)
}

/// inputs → plan → apply → observe → publish.
async fn reconcile_fleet(fleet: &CelldFleet, id: &FleetId, ctx: &Context) -> Result<Action, Error> {
    ctx.shared.caches.ready().await?;
    let inputs = match inputs::read(ctx, fleet, id).await {
        Gathered::Unresolved(e) => return unresolved(ctx, fleet, id, e).await,
        Gathered::Settled(pointer) => {
            ctx.shared.metrics.unchanged();
            return Ok(Action::requeue(requeue_after(ctx, &pointer)));
        }
        Gathered::Changed(inputs) => inputs,
    };
    let desired = desired(ctx, fleet, id, &inputs);
    let deploy_jobs = source_step::deploy_jobs(ctx, &desired, inputs.source.as_ref());
    let plan = plan::plan(&desired, inputs.http_routes_served, deploy_jobs);
    // The versions of the children before they are applied: a child that changes while this
    // reconcile runs then shows a newer version to the next one, which runs in full.
    let children = settled::versions(plan.children(), |kind, name| {
        ctx.shared
            .caches
            .children
            .version(&id.namespace, kind, name)
    });
    let applied = apply_plan::apply(ctx, &desired, plan, inputs.live.clone(), &id.uid).await;
    let led = applied.led;
    if !applied.changed.is_empty() || !applied.pruned.is_empty() {
        info!(fleet = %key(id), changed = ?applied.changed, pruned = ?applied.pruned, "applied");
    }
    let publishing = inputs.source.as_ref().map(|(_, d)| d);
    let report = observe::full(fleet, &inputs, &desired, applied);
    // Every failure met, in one list: the children's (and the deploy Jobs', and the pods'
    // reads) are retried with backoff, whatever else failed waits for its next look.
    let retried: Vec<Failure> = report
        .observation
        .failures
        .iter()
        .filter(|f| f.is_any_child())
        .cloned()
        .collect();
    let quiet = report.observation.failures.is_empty()
        && report.changed.is_empty()
        && report.pruned.is_empty();
    if led && report.observation.failures.is_empty() {
        // Its public Service exists before its pods are ready: a first status written now
        // would say Ready again in a moment, in a second write and an Event.
        ctx.service_lead.pods(&id.uid, FIRST_STATUS_WAIT).await;
    }
    let published = ctx.status.publish(fleet, report).await?;
    let look = next_look(
        &Facts {
            quiet,
            wrote: published.wrote,
            upgrading: desired.upgrade.progress.under_way(),
            adopting: inputs.nodes.as_ref().is_some_and(|r| r.pending()),
            // A deploy Job under way or a retry to come: the Job's changes trigger the fleet,
            // a retry is looked at when it is due.
            publishing: publishing.is_some_and(|d| d.synced.progressing || d.start.is_some()),
            source_wake: publishing.and_then(|d| d.wake_at),
            scale_wake: inputs.autoscale.as_ref().and_then(|a| a.wake_at),
            deadline: published.deadline,
            resync: requeue_after(ctx, &inputs.pointer),
        },
        Timestamp::now(),
    );
    if look.settled {
        ctx.settled.record(&id.uid, inputs.seen, children);
    }
    if !retried.is_empty() {
        // The status says what failed; retrying with backoff picks up whatever changes outside
        // the fleet (a quota, a conflicting object, the API server coming back).
        return Err(Error::Children {
            fleet: key(id),
            failures: retried,
        });
    }
    Ok(Action::requeue(look.after))
}

/// The fleet as the builders want it, from its inputs.
fn desired<'a>(ctx: &Context, fleet: &'a CelldFleet, id: &FleetId, inputs: &Inputs) -> Desired<'a> {
    Desired {
        fleet,
        name: id.name.clone(),
        namespace: id.namespace.clone(),
        config_hash: inputs.config_hash.clone(),
        replicas: if inputs.upgrade.stopped {
            0
        } else {
            // Removing nodes waits while a node is down or restores cells.
            inputs.upgrade.keep_replicas.unwrap_or_else(|| {
                inputs::replicas(fleet, &inputs.pointer, inputs.autoscale.as_ref())
            })
        },
        storage: inputs.storage.clone(),
        https: inputs.https,
        operator: ctx.shared.settings.operator_pods.clone(),
        upgrade: inputs.upgrade.clone(),
    }
}

/// A fleet whose storage does not resolve: never start pods with half a configuration. Its
/// children stay as they are, the status says why, and the reconcile waits for the store or
/// Secret to appear (both are watched); a read the API server did not answer is retried with
/// backoff.
async fn unresolved(
    ctx: &Context,
    fleet: &CelldFleet,
    id: &FleetId,
    error: ResolveError,
) -> Result<Action, Error> {
    let statefulset = caches::child(
        &ctx.shared.caches.children.statefulsets,
        &id.namespace,
        &id.name,
    );
    ctx.status
        .publish(fleet, observe::unresolved(fleet, &error, statefulset))
        .await?;
    match error {
        ResolveError::Api { .. } => Err(error.into()),
        _ => Ok(Action::requeue(resync_grid::aligned(
            ctx.resync(ctx.shared.settings.resync),
        ))),
    }
}

/// When to look at a fleet again: soon while it waits for its first deployment or its bucket
/// cannot be read, at the resync period otherwise; either stretched when the fleets are many.
fn requeue_after(ctx: &Context, pointer: &Pointer) -> Duration {
    resync_grid::aligned(ctx.resync(match pointer {
        Pointer::Deployed(_) => ctx.shared.settings.resync,
        Pointer::Missing | Pointer::Unknown(_) | Pointer::NoCredentials(_) => {
            ctx.shared.settings.pending_resync
        }
    }))
}
