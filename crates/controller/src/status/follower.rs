//! Ready within seconds, however long the reconcile queue: a fleet's Ready condition follows its
//! StatefulSet's status as soon as the StatefulSet's watch reports it, without waiting for the
//! fleet's turn in the reconcile queue (which, when a thousand fleets are created together, is
//! behind the first pass over all of them).
//!
//! Each full reconcile leaves its [`Observation`] (storage, pointer, route, failures, upgrade)
//! for the fleet's generation; the follower recomputes the status from it with the newest
//! StatefulSet and writes it when the Ready condition changes. Anything else (a changed fleet,
//! progress that does not change Ready) waits for the reconcile, which also writes the status.
//! Writes of one fleet's status are serialized ([`Observations::lock`]).

use crate::cache::compact::Compact;
use crate::cache::owner_index::controller_uid;
use crate::cache::streams::Items;
use crate::failure::Failure;
use crate::fleet::context::Context;
use crate::status::compute::{Observed, Route, Storage};
use crate::status::write;
use crate::storage::pointer::Pointer;
use crate::upgrade::decide::Progress;
use celld_api::{ResolvedStorage, conditions};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tracing::debug;

/// StatefulSet changes handled at once.
const CONCURRENCY: usize = 16;

/// What the storage resolution gave, owned.
#[derive(Debug, Clone)]
pub enum ObservedStorage {
    /// Resolved, with the pointer read.
    Resolved(ResolvedStorage, Pointer),
    /// Not resolved.
    Failed(Failure),
}

/// What a full reconcile observed, besides the StatefulSet: enough to compute the status again
/// with a newer StatefulSet.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The fleet's generation it was observed for.
    pub generation: Option<i64>,
    /// spec.replicas.
    pub desired: i32,
    /// Storage and pointer.
    pub storage: ObservedStorage,
    /// The route outcome.
    pub route: Route,
    /// The public URL.
    pub url: Option<String>,
    /// Failures met.
    pub failures: Vec<Failure>,
    /// A change of celld image under way.
    pub upgrade: Progress,
}

impl Observation {
    /// The observation of `observed`, made for the fleet's `generation`.
    pub fn of(observed: &Observed<'_>, generation: Option<i64>) -> Self {
        Self {
            generation,
            desired: observed.desired,
            storage: match observed.storage {
                Storage::Resolved(s, p) => ObservedStorage::Resolved(s.clone(), p.clone()),
                Storage::Failed(f) => ObservedStorage::Failed(f.clone()),
            },
            route: observed.route.clone(),
            url: observed.url.clone(),
            failures: observed.failures.to_vec(),
            upgrade: observed.upgrade.clone(),
        }
    }

    /// What the status is computed from, with `statefulset`.
    pub fn observed<'a>(
        &'a self,
        name: &'a str,
        statefulset: Option<&'a StatefulSet>,
    ) -> Observed<'a> {
        Observed {
            generation: self.generation,
            name,
            desired: self.desired,
            storage: match &self.storage {
                ObservedStorage::Resolved(s, p) => Storage::Resolved(s, p),
                ObservedStorage::Failed(f) => Storage::Failed(f),
            },
            statefulset,
            route: self.route.clone(),
            url: self.url.clone(),
            failures: &self.failures,
            upgrade: &self.upgrade,
        }
    }

    /// The deployment pointer read, if the storage resolved.
    pub fn pointer(&self) -> Option<&Pointer> {
        match &self.storage {
            ObservedStorage::Resolved(_, p) => Some(p),
            ObservedStorage::Failed(_) => None,
        }
    }
}

/// The last observation of every fleet, by uid, and the lock that serializes its status writes.
#[derive(Default)]
pub struct Observations {
    by_uid: Mutex<HashMap<String, Entry>>,
}

#[derive(Default)]
struct Entry {
    observation: Option<Arc<Observation>>,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl Observations {
    fn with<T>(&self, uid: &str, f: impl FnOnce(&mut Entry) -> T) -> T {
        let mut by_uid = self.by_uid.lock().unwrap_or_else(|e| e.into_inner());
        f(by_uid.entry(uid.to_string()).or_default())
    }

    /// The lock of fleet `uid`'s status writes.
    pub fn lock(&self, uid: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.with(uid, |e| e.lock.clone())
    }

    /// Records what a full reconcile of fleet `uid` observed.
    pub fn record(&self, uid: &str, observation: Observation) {
        self.with(uid, |e| e.observation = Some(Arc::new(observation)));
    }

    /// The last observation of fleet `uid` if it was made for its `generation` (a status write
    /// changes the fleet's resourceVersion, not its generation).
    pub fn current(&self, uid: &str, generation: Option<i64>) -> Option<Arc<Observation>> {
        self.with(uid, |e| e.observation.clone())
            .filter(|o| o.generation == generation)
    }

    /// Keeps only the fleets `keep` says are alive.
    pub fn retain(&self, keep: impl Fn(&str) -> bool) {
        let mut by_uid = self.by_uid.lock().unwrap_or_else(|e| e.into_inner());
        crate::cache::map_retain::retain(&mut by_uid, |uid, _| keep(uid));
    }
}

/// The Ready condition's status in a fleet status.
fn ready(status: Option<&celld_api::CelldFleetStatus>) -> Option<&str> {
    status
        .and_then(|s| conditions::find(&s.conditions, conditions::READY))
        .map(|c| c.status.as_str())
}

/// Writes the status of the fleet owning `statefulset` when its Ready condition changes.
async fn follow_one(ctx: &Context, statefulset: StatefulSet) {
    let Some(ns) = statefulset.namespace() else {
        return;
    };
    let name = statefulset.name_any();
    let Some(guard) = ctx.fleets.get(&ObjectRef::new(&name).within(&ns)) else {
        return;
    };
    let Ok(fleet) = &guard.0 else {
        return;
    };
    let uid = fleet.uid().unwrap_or_default();
    if controller_uid(&statefulset) != Some(uid.as_str()) {
        return;
    }
    let lock = ctx.observations.lock(&uid);
    let _writing = lock.lock().await;
    let Some(observation) = ctx.observations.current(&uid, fleet.metadata.generation) else {
        // The fleet changed since its last full reconcile: that reconcile is queued.
        return;
    };
    let observed = observation.observed(&name, Some(&statefulset));
    let Some(update) = write::next(ctx, fleet, &observed) else {
        return;
    };
    if ready(update.previous.as_ref()) == ready(Some(&update.status)) {
        return;
    }
    match write::write(ctx, fleet, update, &observed, observation.pointer()).await {
        Ok(()) => ctx.metrics.followed(),
        Err(e) => {
            debug!(fleet = %name, error = %e, "the status follower could not write; the reconcile will")
        }
    }
}

/// Follows every StatefulSet change in `statefulsets` until `shutdown` resolves.
pub async fn run(
    ctx: Arc<Context>,
    statefulsets: Items<Compact<StatefulSet>>,
    shutdown: impl Future<Output = ()>,
) {
    let follow = statefulsets
        .filter_map(|item| async move { item.ok()?.expand().ok() })
        .for_each_concurrent(CONCURRENCY, |sts| {
            let ctx = ctx.clone();
            async move { follow_one(&ctx, sts).await }
        });
    tokio::select! {
        () = follow => {}
        () = shutdown => {}
    }
}

/// The newer of the StatefulSet a reconcile applied and the one in the cache now: the cache's
/// once it holds the applied spec (its generation is at least the applied one), since its
/// status is then the newer.
pub fn newest(applied: Option<StatefulSet>, cached: Option<StatefulSet>) -> Option<StatefulSet> {
    match (applied, cached) {
        (Some(a), Some(c)) if c.meta().generation >= a.meta().generation => Some(c),
        (applied, _) => applied,
    }
}
