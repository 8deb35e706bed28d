//! What a reconcile observed: an [`Observation`], seen with a StatefulSet as [`Observed`] when
//! the status is computed, enough to compute the fleet's status again with a newer
//! StatefulSet, which is what the [status follower](crate::fleet::status::follower) does between
//! reconciles. A reconcile hands its observation to the [writer](crate::fleet::status::write) in a
//! [`Report`]; the writer keeps the last one of every fleet in [`Observations`].

use crate::autoscale::decide::Scaled;
use crate::buckets::pointer::Pointer;
use crate::capacity::reading::FleetReading;
use crate::failure::Failure;
use crate::locks::lock;
use crate::nodes::adoption::Reading;
use crate::nodes::fences::Fence;
use crate::source::terms::Synced;
use crate::upgrade::decide::Progress;
use crate::upgrade::held::HeldBack;
use celld_api::{
    CelldFleetSpec, Durability, IngressSpec, LocalStorageType, ResolvedStorage, SourceStatus,
};
use k8s_openapi::api::apps::v1::StatefulSet;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What happened to the fleet's route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The spec asks for no route.
    None,
    /// An Ingress was applied.
    Ingress,
    /// An HTTPRoute was applied.
    HttpRoute,
    /// gatewayRefs is set but the cluster does not serve HTTPRoute.
    GatewayApiMissing,
}

impl Route {
    /// The route applied for spec.ingress `ingress`, on a cluster that serves HTTPRoute when
    /// `route_served`.
    pub fn of(ingress: Option<&IngressSpec>, route_served: bool) -> Self {
        match ingress {
            None => Self::None,
            Some(i) if i.ingress_class.is_some() => Self::Ingress,
            Some(_) if route_served => Self::HttpRoute,
            Some(_) => Self::GatewayApiMissing,
        }
    }
}

/// Everything the status is computed from: what a reconcile observed, seen with the fleet's
/// StatefulSet (the one it applied, or a newer one the follower was handed).
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// What the reconcile observed.
    pub observation: &'a Observation,
    /// The fleet's name (for messages and the selector of its node pods).
    pub name: &'a str,
    /// The live StatefulSet, if any.
    pub statefulset: Option<&'a StatefulSet>,
}

impl std::ops::Deref for Observed<'_> {
    type Target = Observation;

    fn deref(&self) -> &Observation {
        self.observation
    }
}

/// What the storage resolution gave, owned.
#[derive(Debug, Clone)]
pub enum ObservedStorage {
    /// Resolved, with the pointer read.
    Resolved(ResolvedStorage, Pointer),
    /// Not resolved.
    Failed(Failure),
}

/// What a full reconcile observed, besides the StatefulSet.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The fleet's generation it was observed for.
    pub generation: Option<i64>,
    /// The nodes wanted: spec.autoscaling's count, else spec.replicas.
    pub desired: i32,
    /// Storage and pointer.
    pub storage: ObservedStorage,
    /// The route outcome.
    pub route: Route,
    /// The public URL.
    pub url: Option<String>,
    /// Every failure met (upgrade, bucket, children, storage), in the order met.
    pub failures: Vec<Failure>,
    /// A change of celld image under way.
    pub upgrade: Progress,
    /// spec.progressDeadlineSeconds.
    pub progress_deadline_s: i64,
    /// The nodes that hold a rollout past its deadline, described (read only then).
    pub holders: Vec<String>,
    /// The nodes' states against the deployed version, when read.
    pub nodes: Option<Arc<Reading>>,
    /// The fleet's deployed-at annotation when the pointer was read.
    pub deployed_at: Option<String>,
    /// What publishing spec.source decided, for a fleet with one.
    pub source: Option<Box<SourceObserved>>,
    /// The last reading of the nodes' capacity (the capacity store's).
    pub capacity: Option<Arc<FleetReading>>,
    /// What spec.autoscaling decided, for a fleet with it.
    pub autoscale: Option<Box<AutoscaleObserved>>,
    /// When the nodes acknowledge a write, and on which work storage.
    pub acknowledged: Acknowledged,
    /// spec.env's settings a release holds, those kept from the nodes for now; None when
    /// spec.env uses none.
    pub held: Option<Vec<HeldBack>>,
    /// The recent self-fences of its nodes.
    pub fences: Vec<Fence>,
}

/// When a fleet's nodes acknowledge a write, and whether their work storage goes with the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acknowledged {
    /// spec.durability, or the work storage's default.
    pub durability: Durability,
    /// Whether spec.durability asked for it.
    pub asked: bool,
    /// Whether the work storage is an emptyDir (Ephemeral).
    pub ephemeral: bool,
}

impl Acknowledged {
    /// What `spec` asks for.
    pub fn of(spec: &CelldFleetSpec) -> Self {
        Self {
            durability: spec.effective_durability(),
            asked: spec.durability.is_some(),
            ephemeral: spec.local_storage.type_ == LocalStorageType::Ephemeral,
        }
    }
}

/// What spec.autoscaling decided, and whether spec.env lets new nodes take existing load.
#[derive(Debug, Clone)]
pub struct AutoscaleObserved {
    /// The decision.
    pub scaled: Scaled,
    /// Whether spec.env sets CELLD_IDLE_EVICT_S.
    pub idle_evict: bool,
}

/// What publishing a fleet's spec.source decided: its next status.source and SourceSynced.
#[derive(Debug, Clone)]
pub struct SourceObserved {
    /// status.source.
    pub status: SourceStatus,
    /// SourceSynced, and what it means for the fleet's health.
    pub synced: Synced,
    /// A drift seen for the first time, worth one Warning (a full reconcile publishes it).
    pub drift_warning: Option<String>,
}

impl Observation {
    /// What the status is computed from, with `statefulset`, for the fleet `name`.
    pub fn observed<'a>(
        &'a self,
        name: &'a str,
        statefulset: Option<&'a StatefulSet>,
    ) -> Observed<'a> {
        Observed {
            observation: self,
            name,
            statefulset,
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

/// Everything one reconcile hands the status writer: what it observed, the StatefulSet it
/// applied (or found), and the children it changed or pruned.
#[derive(Debug)]
pub struct Report {
    /// What the reconcile observed.
    pub observation: Observation,
    /// The StatefulSet as applied, or as the cache held it when nothing was applied.
    pub statefulset: Option<StatefulSet>,
    /// Children created or changed, as `Kind/name`.
    pub changed: Vec<String>,
    /// Children deleted because the spec no longer asks for them, as `Kind/name`.
    pub pruned: Vec<String>,
}

/// The last observation of every fleet, by uid.
#[derive(Default)]
pub struct Observations {
    by_uid: Mutex<HashMap<String, Arc<Observation>>>,
}

impl Observations {
    /// Records what a full reconcile of fleet `uid` observed.
    pub fn record(&self, uid: &str, observation: Arc<Observation>) {
        lock(&self.by_uid).insert(uid.to_string(), observation);
    }

    /// The last observation of fleet `uid` if it was made for its `generation` (a status write
    /// changes the fleet's resourceVersion, not its generation).
    pub fn current(&self, uid: &str, generation: Option<i64>) -> Option<Arc<Observation>> {
        lock(&self.by_uid)
            .get(uid)
            .filter(|o| o.generation == generation)
            .cloned()
    }

    /// Keeps only the fleets `keep` says are alive.
    pub fn retain(&self, keep: impl Fn(&str) -> bool) {
        crate::map_retain::retain(&mut lock(&self.by_uid), |uid, _| keep(uid));
    }
}
