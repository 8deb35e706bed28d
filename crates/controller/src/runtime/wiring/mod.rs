//! Wires the reconciles into kube-runtime Controllers, one module each: fleets and the
//! children they own (`fleet_controller`), the stores' status (`store_controller`) and the
//! previews (`preview_controller`), over the fleets, stores and Secrets each watched once.
//! Every watch comes from [`WatchStreams`] (its own client, timeout and backoff, its life
//! reported to [`WatchHealth`]); the reconciles write through a client that checks the
//! [`Fence`].

mod fleet_controller;
mod preview_controller;
mod rollout_controller;
mod store_controller;
mod watched;

use crate::cache::caches::Caches;
use crate::cache::health::WatchHealth;
use crate::cache::source_caches::flux_kinds;
use crate::cache::streams::WatchStreams;
use crate::fleet::context::HOUSEKEEPING_EVERY;
use crate::leadership::fence::Fence;
use crate::leadership::fenced_client::fenced;
use crate::metrics::Metrics;
use crate::shared::context::Shared;
use crate::shared::retry::error_policy;
use crate::shared::settings::Settings;
use crate::{fleet, preview, rollout, store};
use celld_api::{CelldFleet, CelldObjectStore, CelldPreview, CelldRollout};
use fleet_controller::{FleetParts, fleet_controller};
use futures::StreamExt;
use kube::Client;
use preview_controller::{Previews, preview_controller};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use store_controller::store_controller;
use tracing::{debug, info, warn};
use watched::{OptionalApis, Watched};

/// How long reconciles under way get to finish once a shutdown is asked for. kube-runtime holds
/// a controller's reconciles until its cache has listed once, and waits for them on shutdown:
/// a cache that never lists (its CRD not installed, the list refused) would otherwise keep the
/// operator from ever stopping. Well under Kubernetes' default 30 s termination grace.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The controllers whose memory housekeeping sweeps, and the previews' cache (none when the
/// cluster serves no CelldPreview).
struct Swept {
    fleets: Arc<fleet::context::Context>,
    stores: Arc<store::context::Context>,
    previews: Arc<preview::context::Context>,
    cached_previews: Option<Previews>,
    rollouts: Arc<rollout::context::Context>,
    cached_rollouts: Option<watched::Rollouts>,
}

/// Runs [`fleet::context::Context::housekeeping`] every [`HOUSEKEEPING_EVERY`] until `shutdown`
/// resolves, and forgets the statuses written for stores and previews that are gone.
async fn housekeeping(swept: Swept, shutdown: impl Future<Output = ()>) {
    let mut every = tokio::time::interval(HOUSEKEEPING_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let ticks = async {
        loop {
            every.tick().await;
            swept.fleets.housekeeping();
            let stores = &swept.fleets.shared.caches.stores;
            swept.stores.retain_cached(&stores.state());
            if let Some(previews) = &swept.cached_previews {
                swept.previews.retain_cached(&previews.state());
            }
            if let Some(rollouts) = &swept.cached_rollouts {
                swept.rollouts.retain_cached(&rollouts.state());
            }
        }
    };
    tokio::select! {
        () = ticks => {}
        () = shutdown => {}
    }
}

/// Runs the controller until `shutdown` resolves. Returns once every running reconcile ended, or
/// [`SHUTDOWN_GRACE`] after `shutdown`, whichever comes first.
/// Every write passes `fence`; every watch reports its life to `watches`.
pub async fn run(
    client: Client,
    settings: Settings,
    metrics: Arc<Metrics>,
    fence: Arc<Fence>,
    watches: Arc<WatchHealth>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let streams = WatchStreams::new(client.clone(), settings.namespaces.clone(), watches.clone());
    let optional = OptionalApis {
        gateway_api: crate::cache::discovery::http_route_served(&client).await,
        flux: flux_kinds(&client).await,
        previews: crate::cache::discovery::previews_served(&client).await,
        rollouts: crate::cache::discovery::rollouts_served(&client).await,
    };
    let gateway_api = optional.gateway_api;
    let flux: Vec<&str> = optional.flux.iter().map(|(k, _)| k.as_str()).collect();
    let previews = optional.previews;
    let rollouts_served = optional.rollouts;
    info!(gateway_api, ?flux, previews, rollouts = rollouts_served, namespaces = %settings.namespaces, "starting the CelldFleet controller");
    let Watched {
        fleets,
        fleets_moved,
        stores,
        secrets,
        for_fleets,
        for_stores,
        for_previews,
        rollouts,
    } = Watched::watch(&streams, rollouts_served);
    let (rollouts_for_fleets, rollout_parts) = match rollouts {
        Some((store, for_fleets, triggers)) => {
            (Some((store.clone(), for_fleets)), Some((store, triggers)))
        }
        None => (None, None),
    };
    let FleetParts {
        controller: fleet_controller,
        children,
        source,
        statefulsets_to_follow,
        node_pods,
    } = fleet_controller(
        &streams,
        &settings,
        &optional,
        &fleets,
        &stores,
        for_fleets,
        rollouts_for_fleets,
    );
    // Fleets whose nodes answered after their reconcile stopped waiting are looked at again.
    let (node_trigger, again) = futures::channel::mpsc::unbounded();
    let fleet_controller = fleet_controller.reconcile_on(again);
    let store_controller = store_controller(&stores, for_stores, settings.concurrency);
    let rollout_controller = rollout_parts.map(|(store, triggers)| {
        let controller = rollout_controller::rollout_controller(
            &store,
            triggers.rollouts,
            triggers.fleets,
            settings.concurrency,
        );
        (controller, store)
    });
    let caches = Caches::new(
        fleets,
        children,
        stores,
        secrets,
        source,
        streams.listed(),
        fleets_moved,
    );
    // Made after the caches every reconcile waits for: a fleet never waits for the previews.
    let (preview_controller, cached_previews) =
        match previews.then(|| preview_controller(&streams, for_previews, settings.concurrency)) {
            Some((controller, cached)) => (Some(controller), Some(cached)),
            None => (None, None),
        };
    let writer = fenced(client, fence, metrics.clone(), settings.api_qps);
    let shared = Arc::new(Shared::new(writer, metrics, settings, caches));
    let ctx = Arc::new(fleet::context::Context::new(
        shared.clone(),
        gateway_api,
        node_trigger,
    ));
    let store_ctx = Arc::new(store::context::Context::new(shared.clone()));
    let preview_ctx = Arc::new(preview::context::Context::new(shared.clone()));
    let rollout_ctx = Arc::new(rollout::context::Context::new(shared.clone()));
    let shutdown = futures::FutureExt::shared(Box::pin(shutdown));
    let shutdown_previews = shutdown.clone();
    let swept = Swept {
        fleets: ctx.clone(),
        stores: store_ctx.clone(),
        previews: preview_ctx.clone(),
        cached_previews,
        rollouts: rollout_ctx.clone(),
        cached_rollouts: rollout_controller.as_ref().map(|(_, store)| store.clone()),
    };
    let housekeeping = tokio::spawn(housekeeping(swept, shutdown.clone()));
    let capacity = tokio::spawn(fleet::capacity_reads::run(ctx.clone(), shutdown.clone()));
    let fences = tokio::spawn(fleet::fence_watch::run(
        ctx.clone(),
        node_pods,
        shutdown.clone(),
    ));
    let follower = tokio::spawn(fleet::status::follower::run(
        ctx.status.clone(),
        ctx.service_lead.clone(),
        shared.caches.fleets.clone(),
        statefulsets_to_follow,
        shutdown.clone(),
    ));
    let fleet_loop = fleet_controller
        .graceful_shutdown_on(shutdown.clone())
        .run(
            fleet::reconcile::reconcile,
            error_policy::<CelldFleet, _>,
            ctx.clone(),
        )
        .for_each(|result| async move {
            match result {
                Ok((obj, _)) => debug!(fleet = %obj, "reconciled"),
                Err(e) => debug!(error = %e, "reconcile did not complete"),
            }
        });
    let store_loop = store_controller
        .graceful_shutdown_on(shutdown.clone())
        .run(
            store::status::reconcile,
            error_policy::<CelldObjectStore, _>,
            store_ctx,
        )
        .for_each(|result| async move {
            if let Err(e) = result {
                debug!(error = %e, "store status did not complete");
            }
        });
    let preview_loop = async move {
        if let Some(controller) = preview_controller {
            controller
                .graceful_shutdown_on(shutdown_previews)
                .run(
                    preview::reconcile::reconcile,
                    error_policy::<CelldPreview, _>,
                    preview_ctx,
                )
                .for_each(|result| async move {
                    if let Err(e) = result {
                        debug!(error = %e, "preview reconcile did not complete");
                    }
                })
                .await;
        }
    };
    let shutdown_rollouts = shutdown.clone();
    let rollout_loop = async move {
        if let Some((controller, _)) = rollout_controller {
            controller
                .graceful_shutdown_on(shutdown_rollouts)
                .run(
                    rollout::reconcile::reconcile,
                    error_policy::<CelldRollout, _>,
                    rollout_ctx,
                )
                .for_each(|result| async move {
                    if let Err(e) = result {
                        debug!(error = %e, "rollout reconcile did not complete");
                    }
                })
                .await;
        }
    };
    let grace = async {
        shutdown.clone().await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        _ = futures::future::join4(fleet_loop, store_loop, preview_loop, rollout_loop) => {}
        () = grace => warn!(grace = ?SHUTDOWN_GRACE, "reconciles still under way, or a watch that never listed, at the end of the shutdown grace; stopping without them"),
    }
    housekeeping.abort();
    capacity.abort();
    fences.abort();
    follower.abort();
    watches.forget_all();
    info!("controller stopped");
}
