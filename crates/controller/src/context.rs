//! What every reconcile shares: the client, the event recorder, metrics, settings and the
//! per-fleet error backoff.

use crate::metrics::Metrics;
use celld_api::{CelldFleet, CelldFleetStatus};
use kube::Client;
use kube::core::DeserializeGuard;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::Store;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Settings of the controller.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Watch only this namespace; None watches every namespace.
    pub namespace: Option<String>,
    /// How often a healthy fleet is reconciled again (to refresh the deployed version).
    pub resync: Duration,
    /// How often a fleet without a deployment is checked again.
    pub pending_resync: Duration,
    /// Time bound of one object-storage read.
    pub s3_timeout: Duration,
    /// The name reported on Events (the operator Deployment's name).
    pub reporter: String,
    /// The instance reported on Events (the pod's name).
    pub instance: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            namespace: None,
            resync: Duration::from_secs(60),
            pending_resync: Duration::from_secs(15),
            s3_timeout: Duration::from_secs(5),
            reporter: "celld-operator".into(),
            instance: None,
        }
    }
}

/// State shared by the reconciles.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// Publishes Events on fleets.
    pub recorder: Recorder,
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
    /// The status last written per fleet uid, with the resourceVersion of the fleet it was
    /// computed from: a reconcile that sees that same version again (the cache has not caught
    /// up with the write yet) starts from what was written, not from the stale status.
    written: Mutex<HashMap<String, (String, CelldFleetStatus)>>,
    /// S3 clients by configuration hash, so reconciles reuse their connections.
    s3_clients: Mutex<HashMap<String, aws_sdk_s3::Client>>,
}

/// More cached S3 clients than this and the cache starts over (rotated credentials leave old
/// entries behind).
const MAX_S3_CLIENTS: usize = 1024;

impl Context {
    /// A context for `client`.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        settings: Settings,
        gateway_api: bool,
        fleets: Store<DeserializeGuard<CelldFleet>>,
    ) -> Self {
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: settings.reporter.clone(),
                instance: settings.instance.clone(),
            },
        );
        Self {
            client,
            recorder,
            metrics,
            settings,
            gateway_api: AtomicBool::new(gateway_api),
            failures: Mutex::new(HashMap::new()),
            fleets,
            written: Mutex::new(HashMap::new()),
            s3_clients: Mutex::new(HashMap::new()),
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

    /// The status written for fleet `uid` when it was at `resource_version`, if that is the
    /// version seen now.
    pub fn written_status(&self, uid: &str, resource_version: &str) -> Option<CelldFleetStatus> {
        let written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        written
            .get(uid)
            .filter(|(rv, _)| rv == resource_version)
            .map(|(_, status)| status.clone())
    }

    /// Remembers the status written for fleet `uid` at `resource_version`, forgetting fleets
    /// that no longer exist.
    pub fn remember_status(&self, uid: &str, resource_version: &str, status: CelldFleetStatus) {
        let live: std::collections::HashSet<String> = self
            .fleets
            .state()
            .iter()
            .filter_map(|g| g.0.as_ref().ok().and_then(|f| f.metadata.uid.clone()))
            .collect();
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        written.retain(|uid, _| live.contains(uid));
        written.insert(uid.to_string(), (resource_version.to_string(), status));
    }

    /// The S3 client for configuration `hash`, built by `build` the first time.
    pub fn s3_client(
        &self,
        hash: &str,
        build: impl FnOnce() -> Result<aws_sdk_s3::Client, String>,
    ) -> Result<aws_sdk_s3::Client, String> {
        let mut clients = self.s3_clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = clients.get(hash) {
            return Ok(client.clone());
        }
        let client = build()?;
        if clients.len() >= MAX_S3_CLIENTS {
            clients.clear();
        }
        clients.insert(hash.to_string(), client.clone());
        Ok(client)
    }

    /// Whether HTTPRoute is served; asks the API server again when it was not, so installing
    /// the Gateway API CRDs later is noticed.
    pub async fn http_route_served(&self) -> bool {
        if self.gateway_api.load(Ordering::Relaxed) {
            return true;
        }
        let served = crate::discovery::http_route_served(&self.client).await;
        self.gateway_api.store(served, Ordering::Relaxed);
        served
    }
}
