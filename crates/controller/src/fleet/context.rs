//! What every reconcile of a fleet shares: the client, settings, metrics, the caches it reads
//! instead of the API server, the bucket clients and pointer reads, what settled fleets last
//! saw, the nodes' API, the status writer and the per-fleet error backoff.

use crate::cache::caches::Caches;
use crate::cache::heap_release::HeapRelease;
use crate::capacity::store::CapacityStore;
use crate::fleet::fleet_set::FleetSet;
use crate::fleet::service_lead::ServiceLead;
use crate::fleet::settled::{FULL_RECONCILES_PER_SECOND, Settled};
use crate::fleet::status::write::Writer;
use crate::map_retain;
use crate::metrics::Metrics;
use crate::nodes::client::NodeApi;
use crate::nodes::reads::NodeReads;
use crate::shared::settings::Settings;
use crate::storage::bucket_clients::BucketClients;
use crate::storage::credentials::SecretContents;
use crate::storage::manifest_reads::ManifestReads;
use crate::storage::pointer_reads::PointerReads;
use celld_api::{CelldFleet, conditions};
use kube::Client;
use kube::core::DeserializeGuard;
use kube::runtime::events::Reporter;
use kube::runtime::reflector::{ObjectRef, Store};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often [`Context::housekeeping`] runs.
pub const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(5);

/// Where a fleet is sent to be reconciled again, out of turn.
pub type FleetTrigger =
    futures::channel::mpsc::UnboundedSender<ObjectRef<DeserializeGuard<CelldFleet>>>;

/// Bound of one request to a node's internal API.
const NODE_API_TIMEOUT: Duration = Duration::from_secs(3);

/// State shared by the reconciles.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// The operator's metrics.
    pub metrics: Arc<Metrics>,
    /// Settings.
    pub settings: Settings,
    /// Whether the cluster serves the HTTPRoute CRD.
    pub gateway_api: AtomicBool,
    /// Consecutive failures per fleet (namespace/name), for exponential backoff.
    failures: Mutex<HashMap<String, u32>>,
    /// The controller's cache of fleets (for the fleets-by-condition gauge and mappers).
    pub fleets: Store<DeserializeGuard<CelldFleet>>,
    /// What reconciles read: children, stores and Secret metadata.
    pub caches: Caches,
    /// Contents of credentials Secrets, read once per resourceVersion.
    pub secrets: SecretContents,
    /// Bucket clients shared by fleets on the same object store.
    pub buckets: BucketClients,
    /// The last read of each fleet's deployment pointer.
    pub pointers: PointerReads,
    /// The manifest of each fleet's deployed version, read once per version.
    pub manifests: ManifestReads,
    /// Fleets whose last reconcile needed nothing, with the inputs it saw.
    pub settled: Settled,
    /// The nodes' internal API: their states and reloads.
    pub node_api: NodeApi,
    /// The reloads sent to each fleet's nodes, and their last readings.
    pub node_reads: Arc<NodeReads>,
    /// Asks the controller to look at a fleet again: a late reading of its nodes differs.
    pub node_trigger: FleetTrigger,
    /// The last capacity reading of every fleet (the gauges read it too).
    pub capacity: Arc<CapacityStore>,
    /// The one writer of the fleets' statuses and Events.
    pub status: Arc<Writer>,
    /// The starts of new fleets, and whether their pods wait for their public Service.
    pub service_lead: Arc<ServiceLead>,
    /// When to hand the heap back to the system: after fleets were deleted.
    pub heap_release: HeapRelease,
    /// How many fleets the cache held at the last housekeeping.
    fleet_count: AtomicUsize,
    /// Whether housekeeping looks at every fleet: only when their watch brought a change.
    fleet_set: FleetSet,
}

impl Context {
    /// A context for `client`.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        settings: Settings,
        gateway_api: bool,
        fleets: Store<DeserializeGuard<CelldFleet>>,
        caches: Caches,
        node_trigger: FleetTrigger,
    ) -> Self {
        let buckets = BucketClients::new(
            settings.s3_timeout,
            settings.store_endpoints.clone(),
            settings.resync,
        );
        let pointers = PointerReads::new(settings.pending_resync, settings.s3_timeout);
        let manifests = ManifestReads::new(settings.resync, settings.s3_timeout);
        let reporter = Reporter {
            controller: settings.reporter.clone(),
            instance: settings.instance.clone(),
        };
        let node_api = NodeApi::new(settings.node_api_connect_to.clone(), NODE_API_TIMEOUT);
        Self {
            capacity: metrics.capacity(),
            node_api,
            node_reads: Arc::new(NodeReads::default()),
            node_trigger,
            status: Arc::new(Writer::new(
                client.clone(),
                metrics.clone(),
                reporter,
                caches.children.statefulsets.clone(),
            )),
            service_lead: Arc::new(ServiceLead::new(settings.public_service_first)),
            heap_release: HeapRelease::default(),
            fleet_count: AtomicUsize::new(0),
            fleet_set: FleetSet::default(),
            client,
            metrics,
            settings,
            gateway_api: AtomicBool::new(gateway_api),
            failures: Mutex::new(HashMap::new()),
            fleets,
            secrets: SecretContents::new(caches.secrets.clone()),
            buckets,
            pointers,
            manifests,
            settled: Settled::default(),
            caches,
        }
    }

    /// Records a failure of `key` and returns how long to wait before retrying: 1 s doubling
    /// up to 5 minutes.
    pub fn backoff(&self, key: &str) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = failures.entry(key.to_string()).or_insert(0);
        *n = n.saturating_add(1);
        let secs = 1u64 << (*n - 1).min(9);
        Duration::from_secs(secs.min(300))
    }

    /// Forgets the failures of `key` after a successful reconcile.
    pub fn succeeded(&self, key: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// What runs beside the reconciles, once per [`HOUSEKEEPING_EVERY`] rather than once per
    /// reconcile: Secrets' contents no longer cached are forgotten, and, when the fleets moved
    /// (see [`FleetSet`]), the fleets-by-Ready gauge is recounted and deleted fleets leave
    /// nothing behind (both walk every fleet).
    pub fn housekeeping(&self) {
        self.secrets.forget_deleted();
        // Counted before the fleets are read: a change that lands meanwhile is looked at again.
        if self.fleet_set.look_now(self.caches.fleets_moved.count()) {
            // Borrowed from the cache: with 10,000 fleets a copy of each uid and name every
            // round was most of the housekeeping's time.
            let fleets = self.fleets.state();
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
            self.metrics.set_fleets(ready, not_ready, unknown);
            self.fleet_count.store(fleets.len(), Ordering::Relaxed);
            self.forget_deleted(&fleets);
        }
        self.heap_release
            .round(self.fleet_count.load(Ordering::Relaxed));
    }

    /// Forgets what is kept for fleets no longer in `fleets`: written status and observation,
    /// pointer read, reloads sent, settled inputs, start, failure count, a bucket client no fleet
    /// uses.
    fn forget_deleted(&self, fleets: &[Arc<DeserializeGuard<CelldFleet>>]) {
        // Every parsed fleet's uid, with its resourceVersion.
        let live: HashMap<&str, &str> = fleets
            .iter()
            .filter_map(|guard| {
                let meta = &guard.0.as_ref().ok()?.metadata;
                Some((
                    meta.uid.as_deref()?,
                    meta.resource_version.as_deref().unwrap_or_default(),
                ))
            })
            .collect();
        // Failure counts are kept by namespace/name, of fleets the cache holds (parsed or not).
        let cached = |key: &str| {
            key.split_once('/').is_some_and(|(ns, name)| {
                self.fleets.get(&ObjectRef::new(name).within(ns)).is_some()
            })
        };
        map_retain::retain(
            &mut self.failures.lock().unwrap_or_else(|e| e.into_inner()),
            |key, _| key.starts_with("store:") || cached(key),
        );
        self.pointers.retain(|uid| live.contains_key(uid));
        self.node_reads.retain(|uid| live.contains_key(uid));
        self.capacity.retain(|uid| live.contains_key(uid));
        self.service_lead.retain(|uid| live.contains_key(uid));
        self.manifests.retain(|uid| live.contains_key(uid));
        let clients = self.buckets.drop_unused(Instant::now(), &live);
        self.metrics.set_s3_clients(clients);
        self.settled.retain(|uid| live.contains_key(uid));
        self.status.retain(&live);
    }

    /// How long a fleet waits for its next periodic reconcile when its resync period is
    /// `period`: stretched when the fleets are more than --resyncs-per-second allows.
    pub fn resync(&self, period: Duration) -> Duration {
        crate::shared::resync_budget::stretched(
            period,
            self.fleet_count.load(Ordering::Relaxed),
            self.settings.resyncs_per_second,
        )
    }

    /// The longest a settled fleet goes without a full reconcile: --full-reconcile-seconds,
    /// stretched when the fleets are more than [`FULL_RECONCILES_PER_SECOND`] allows.
    pub fn full_every(&self) -> Duration {
        crate::shared::resync_budget::stretched(
            self.settings.full_every,
            self.fleet_count.load(Ordering::Relaxed),
            FULL_RECONCILES_PER_SECOND,
        )
    }

    /// Whether the cluster served HTTPRoute when last asked.
    pub fn gateway_api(&self) -> bool {
        self.gateway_api.load(Ordering::Relaxed)
    }

    /// Whether HTTPRoute is served; asks the API server again when it was not, so installing
    /// the Gateway API CRDs later is noticed.
    pub async fn http_route_served(&self) -> bool {
        if self.gateway_api.load(Ordering::Relaxed) {
            return true;
        }
        let served = crate::cache::discovery::http_route_served(&self.client).await;
        self.gateway_api.store(served, Ordering::Relaxed);
        served
    }
}
