//! The operator's life: stand by until this replica holds the leader Lease, reconcile while it
//! does, and stop writing the moment it does not: every write passes the [`Fence`], which
//! closes when the Lease is not seen renewed in time, before another replica could take it.

use crate::cache::health::{WatchHealth, WatchSettings};
use crate::leadership::fence::{Fence, renew_grace};
use crate::leadership::lease_fence::{Leader, LeaseFence};
use crate::metrics::Metrics;
use crate::runtime::wiring;
use crate::shared::settings::Settings;
use kube::Client;
use kube_lease_manager::{LeaseManagerBuilder, LeaseManagerError};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{oneshot, watch};
use tracing::{info, warn};

/// Why the operator stopped other than by a shutdown request.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Another replica took the Lease; the process should exit and start again as a standby.
    #[error("lost the leader Lease; exiting so that only the new leader writes")]
    LostLeadership,
    /// The Lease could not be used.
    #[error(
        "leader election failed: {0}; check that the operator may get, create and update Leases in its namespace"
    )]
    Lease(#[from] LeaseManagerError),
}

async fn until_leader(rx: &mut watch::Receiver<bool>) -> bool {
    loop {
        if *rx.borrow_and_update() {
            return true;
        }
        if rx.changed().await.is_err() {
            return false;
        }
    }
}

async fn until_not_leader(rx: &mut watch::Receiver<bool>) {
    loop {
        if rx.changed().await.is_err() || !*rx.borrow_and_update() {
            return;
        }
    }
}

/// Runs the operator until `shutdown` resolves or, with leader election, leadership is lost;
/// watches are timed by [`WatchSettings::default`].
pub async fn run(
    client: Client,
    settings: Settings,
    leader: Option<Leader>,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let watches = Arc::new(WatchHealth::new(WatchSettings::default(), metrics.clone()));
    run_watched(client, settings, leader, metrics, ready, watches, shutdown).await
}

/// Runs the operator until `shutdown` resolves or, with leader election, leadership is lost,
/// reporting the life of its watches to `watches`.
pub async fn run_watched(
    client: Client,
    settings: Settings,
    leader: Option<Leader>,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
    watches: Arc<WatchHealth>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    match leader {
        None => {
            run_alone(client, settings, metrics, ready, watches, shutdown).await;
            Ok(())
        }
        Some(leader) => {
            run_elected(client, settings, leader, metrics, ready, watches, shutdown).await
        }
    }
}

/// Without leader election: the only replica writes from the start, unfenced.
async fn run_alone(
    client: Client,
    settings: Settings,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
    watches: Arc<WatchHealth>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    ready.store(true, Ordering::Relaxed);
    metrics.set_leader(true);
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let fence = Arc::new(Fence::unfenced());
    let controller = wiring::run(client, settings, metrics, fence, watches, async move {
        let _ = stop_rx.await;
    });
    tokio::pin!(controller);
    tokio::select! {
        () = &mut controller => {}
        () = shutdown => {
            let _ = stop_tx.send(());
            controller.await;
        }
    }
}

/// With leader election: stand by until this replica holds the Lease, then reconcile behind a
/// fence that closes the moment the Lease is not seen renewed in time.
async fn run_elected(
    client: Client,
    settings: Settings,
    leader: Leader,
    metrics: Arc<Metrics>,
    ready: Arc<AtomicBool>,
    watches: Arc<WatchHealth>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let manager = LeaseManagerBuilder::new(client.clone(), &leader.lease)
        .with_namespace(&leader.namespace)
        .with_identity(&leader.identity)
        .with_duration(leader.duration_seconds)
        .with_grace(renew_grace(leader.duration_seconds))
        .build()
        .await?;
    let (mut rx, lease_task) = manager.watch().await;
    ready.store(true, Ordering::Relaxed);
    info!(lease = %leader.lease, identity = %leader.identity, "standing by for the leader Lease");

    tokio::pin!(shutdown);
    let became_leader = tokio::select! {
        leading = until_leader(&mut rx) => leading,
        () = &mut shutdown => false,
    };
    if !became_leader {
        drop(rx);
        let _ = lease_task.await;
        return Ok(());
    }
    info!(identity = %leader.identity, "holding the leader Lease; reconciling");
    let fence = Arc::new(Fence::closed());
    let keeper = LeaseFence::new(
        client.clone(),
        &leader,
        fence.clone(),
        watches.settings().timeout,
    );
    // Open the fence before the first reconcile wants to write.
    keeper.refresh().await;
    metrics.set_leader(true);
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let mut controller = tokio::spawn(wiring::run(
        client,
        settings,
        metrics.clone(),
        fence.clone(),
        watches,
        async move {
            let _ = stop_rx.await;
        },
    ));
    let keeper = keeper.run();
    tokio::pin!(keeper);
    let outcome = tokio::select! {
        () = &mut shutdown => {
            let _ = stop_tx.send(());
            let _ = (&mut controller).await;
            Ok(())
        }
        () = until_not_leader(&mut rx) => {
            fence.lose();
            warn!("the leader Lease was lost; stopping all writes");
            controller.abort();
            Err(RunError::LostLeadership)
        }
        () = &mut keeper => {
            fence.lose();
            warn!("the leader Lease is held by another replica; stopping all writes");
            controller.abort();
            Err(RunError::LostLeadership)
        }
        _ = &mut controller => Ok(()),
    };
    // Nothing writes once the Lease is given up below.
    fence.lose();
    metrics.set_leader(false);
    drop(rx);
    let _ = lease_task.await;
    outcome
}
