//! What the fleet controller keeps beside the [shared](crate::shared::context) state: the
//! pointer and manifest reads, the nodes' API and readings, what settled fleets last saw, the
//! fleets' status writer, the starts of new fleets and the housekeeping of it all.

use crate::buckets::manifest_reads::ManifestReads;
use crate::buckets::pointer_reads::PointerReads;
use crate::cache::heap_release::HeapRelease;
use crate::capacity::exported::Exported;
use crate::capacity::store::CapacityStore;
use crate::fleet::fleet_set::FleetSet;
use crate::fleet::prefix_claims::PrefixClaims;
use crate::fleet::service_lead::ServiceLead;
use crate::fleet::settled::{FULL_RECONCILES_PER_SECOND, Settled};
use crate::fleet::status::write::FleetWriter;
use crate::nodes::client::NodeApi;
use crate::nodes::fences::FenceLog;
use crate::nodes::reachability::Reachability;
use crate::nodes::reads::NodeReads;
use crate::shared::context::{Controlled, Shared};
use crate::shared::resync_budget;
use crate::status::written::{Written, cached_versions};
use celld_api::{CelldFleet, conditions};
use k8s_openapi::jiff::Timestamp;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::ObjectRef;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often [`Context::housekeeping`] runs.
pub const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(5);

/// Where a fleet is sent to be reconciled again, out of turn.
pub type FleetTrigger =
    futures::channel::mpsc::UnboundedSender<ObjectRef<DeserializeGuard<CelldFleet>>>;

/// Bound of one request to a node's internal API.
const NODE_API_TIMEOUT: Duration = Duration::from_secs(3);

/// The fleet controller's state.
pub struct Context {
    /// What every controller shares.
    pub shared: Arc<Shared>,
    /// What the fleets' buckets said, the statuses written lately, and whether the cluster
    /// serves HTTPRoute.
    pub reads: FleetReads,
    /// The fleets' nodes: their API, readings and capacity.
    pub nodes: NodeState,
    /// Fleets whose last reconcile needed nothing, with the inputs it saw.
    pub settled: Settled,
    /// The one writer of the fleets' statuses and Events.
    pub status: Arc<FleetWriter>,
    /// The starts of new fleets, and whether their pods wait for their public Service.
    pub service_lead: Arc<ServiceLead>,
    /// The fleets' claims on bucket prefixes.
    pub prefix_claims: PrefixClaims,
    /// What housekeeping counts and when it hands memory back.
    housekeeping: Housekeeping,
}

/// What the fleets' buckets said, the statuses written lately, and whether the cluster serves
/// HTTPRoute.
pub struct FleetReads {
    /// The last read of each fleet's deployment pointer.
    pub pointers: PointerReads,
    /// The manifest of each fleet's deployed version, read once per version.
    pub manifests: ManifestReads,
    /// The statuses the writer wrote that the fleets' cache may not show yet.
    pub written: Arc<Written<CelldFleet>>,
    /// Whether the cluster serves the HTTPRoute CRD.
    gateway_api: AtomicBool,
}

/// The fleets' nodes.
pub struct NodeState {
    /// The nodes' internal API: their states and reloads.
    pub api: NodeApi,
    /// The reloads sent to each fleet's nodes, and their last readings.
    pub reads: Arc<NodeReads>,
    /// Asks the controller to look at a fleet again: a late reading of its nodes differs.
    pub trigger: FleetTrigger,
    /// The last capacity reading of every fleet (the gauges read it too).
    pub capacity: Arc<CapacityStore>,
    /// The nodes' recent self-fences.
    pub fences: FenceLog,
}

/// What housekeeping keeps between its rounds.
#[derive(Default)]
struct Housekeeping {
    /// When to hand the heap back to the system: after fleets were deleted.
    heap_release: HeapRelease,
    /// How many fleets the cache held at the last housekeeping.
    fleet_count: AtomicUsize,
    /// Whether housekeeping looks at every fleet: only when their watch brought a change.
    fleet_set: FleetSet,
}

impl Context {
    /// The fleet controller's state over `shared`; `gateway_api` says whether the cluster
    /// served HTTPRoute at the start, `node_trigger` where late node readings send a fleet.
    pub fn new(shared: Arc<Shared>, gateway_api: bool, node_trigger: FleetTrigger) -> Self {
        let settings = &shared.settings;
        let capacity = Arc::new(CapacityStore::default());
        shared.metrics.export(Box::new(Exported(capacity.clone())));
        let written = Arc::new(Written::default());
        Self {
            reads: FleetReads {
                written: written.clone(),
                pointers: PointerReads::new(settings.pending_resync, settings.s3_timeout),
                manifests: ManifestReads::new(settings.resync, settings.s3_timeout),
                gateway_api: AtomicBool::new(gateway_api),
            },
            nodes: NodeState {
                api: NodeApi::with(
                    settings.node_api_connect_to.clone(),
                    NODE_API_TIMEOUT,
                    Reachability::counted(shared.metrics.clone()),
                ),
                reads: Arc::new(NodeReads::default()),
                trigger: node_trigger,
                capacity,
                fences: FenceLog::default(),
            },
            settled: Settled::default(),
            status: Arc::new(FleetWriter::new(
                shared.client.clone(),
                shared.metrics.clone(),
                shared.reporter(),
                shared.caches.children.statefulsets.clone(),
                written,
            )),
            service_lead: Arc::new(ServiceLead::new(settings.public_service_first)),
            prefix_claims: PrefixClaims::default(),
            housekeeping: Housekeeping::default(),
            shared,
        }
    }

    /// What runs beside the reconciles, once per [`HOUSEKEEPING_EVERY`] rather than once per
    /// reconcile: the [shared](Shared::housekeeping) state's, and, when the fleets moved (see
    /// [`FleetSet`]), the fleets-by-Ready gauge is recounted and deleted fleets leave nothing
    /// behind (both walk every fleet).
    pub fn housekeeping(&self) {
        self.shared.housekeeping();
        self.nodes.fences.forget_old(Timestamp::now());
        let caches = &self.shared.caches;
        let housekeeping = &self.housekeeping;
        // Counted before the fleets are read: a change that lands meanwhile is looked at again.
        if housekeeping.fleet_set.look_now(caches.fleets_moved.count()) {
            // Borrowed from the cache: with 10,000 fleets a copy of each uid and name every
            // round was most of the housekeeping's time.
            let fleets = caches.fleets.state();
            let (mut ready, mut not_ready, mut unknown) = (0, 0, 0);
            for guard in &fleets {
                let Ok(fleet) = &guard.0 else {
                    unknown += 1;
                    continue;
                };
                let ready_status = fleet.status.as_ref().and_then(|s| {
                    conditions::find(&s.conditions, conditions::READY).map(|c| c.status.as_str())
                });
                match ready_status {
                    Some("True") => ready += 1,
                    Some("False") => not_ready += 1,
                    _ => unknown += 1,
                }
            }
            self.shared.metrics.set_fleets(ready, not_ready, unknown);
            housekeeping
                .fleet_count
                .store(fleets.len(), Ordering::Relaxed);
            self.forget_deleted(&fleets);
        }
        housekeeping
            .heap_release
            .round(housekeeping.fleet_count.load(Ordering::Relaxed));
    }

    /// Forgets what is kept for fleets no longer in `fleets`: written status and observation,
    /// pointer read, reloads sent, settled inputs, start, a bucket client no fleet uses.
    fn forget_deleted(&self, fleets: &[Arc<DeserializeGuard<CelldFleet>>]) {
        let live = cached_versions(fleets);
        self.reads.pointers.retain(|uid| live.contains_key(uid));
        self.nodes.reads.retain(|uid| live.contains_key(uid));
        self.nodes.capacity.retain(|uid| live.contains_key(uid));
        self.service_lead.retain(|uid| live.contains_key(uid));
        self.reads.manifests.retain(|uid| live.contains_key(uid));
        let clients = self.shared.buckets.drop_unused(Instant::now(), &live);
        self.shared.metrics.set_s3_clients(clients);
        self.settled.retain(|uid| live.contains_key(uid));
        self.prefix_claims.retain(|uid| live.contains_key(uid));
        self.reads.written.retain(&live);
        self.status.retain(&live);
    }

    /// How long a fleet waits for its next periodic reconcile when its resync period is
    /// `period`: stretched when the fleets are more than --resyncs-per-second allows.
    pub fn resync(&self, period: Duration) -> Duration {
        resync_budget::stretched(
            period,
            self.housekeeping.fleet_count.load(Ordering::Relaxed),
            self.shared.settings.resyncs_per_second,
        )
    }

    /// The longest a settled fleet goes without a full reconcile: --full-reconcile-seconds,
    /// stretched when the fleets are more than [`FULL_RECONCILES_PER_SECOND`] allows.
    pub fn full_every(&self) -> Duration {
        resync_budget::stretched(
            self.shared.settings.full_every,
            self.housekeeping.fleet_count.load(Ordering::Relaxed),
            FULL_RECONCILES_PER_SECOND,
        )
    }

    /// Whether the cluster served HTTPRoute when last asked.
    pub fn gateway_api(&self) -> bool {
        self.reads.gateway_api.load(Ordering::Relaxed)
    }

    /// Whether HTTPRoute is served; asks the API server again when it was not, so installing
    /// the Gateway API CRDs later is noticed.
    pub async fn http_route_served(&self) -> bool {
        if self.reads.gateway_api.load(Ordering::Relaxed) {
            return true;
        }
        let served = crate::cache::discovery::http_route_served(&self.shared.client).await;
        self.reads.gateway_api.store(served, Ordering::Relaxed);
        served
    }
}

impl Controlled for Context {
    fn shared(&self) -> &Shared {
        &self.shared
    }
}
