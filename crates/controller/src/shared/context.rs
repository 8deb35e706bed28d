//! What every controller's reconciles share: the client, the metrics, the settings, the caches
//! they read instead of the API server, the contents of credentials Secrets, the bucket clients
//! and the retry backoff. Each controller keeps what only it needs in a context of its own,
//! beside an `Arc` of this one.

use crate::buckets::bucket_clients::BucketClients;
use crate::buckets::credentials::SecretContents;
use crate::cache::caches::Caches;
use crate::metrics::Metrics;
use crate::shared::backoff::Backoff;
use crate::shared::settings::Settings;
use crate::status::reported::Reported;
use crate::status::writer::Writer;
use crate::status::written::{Written, cached_versions};
use kube::Client;
use kube::core::DeserializeGuard;
use kube::runtime::events::Reporter;
use std::sync::Arc;
use std::time::Instant;

/// State every controller's reconciles share.
pub struct Shared {
    /// The API client (its writes pass the leadership fence and are counted).
    pub client: Client,
    /// The operator's metrics.
    pub metrics: Arc<Metrics>,
    /// Settings.
    pub settings: Settings,
    /// What reconciles read: fleets, children, stores and Secret metadata.
    pub caches: Caches,
    /// Contents of credentials Secrets, read once per resourceVersion.
    pub secrets: SecretContents,
    /// Bucket clients shared by fleets on the same object store.
    pub buckets: BucketClients,
    /// Consecutive failures per object, for exponential backoff.
    pub backoff: Backoff,
}

impl Shared {
    /// The shared state of reconciles sending through `client`.
    pub fn new(client: Client, metrics: Arc<Metrics>, settings: Settings, caches: Caches) -> Self {
        Self {
            buckets: BucketClients::new(
                settings.s3_timeout,
                settings.store_endpoints.clone(),
                settings.resync,
            ),
            secrets: SecretContents::new(caches.secrets.clone()),
            backoff: Backoff::default(),
            client,
            metrics,
            settings,
            caches,
        }
    }

    /// Who publishes the operator's Events: its Deployment and pod.
    pub fn reporter(&self) -> Reporter {
        Reporter {
            controller: self.settings.reporter.clone(),
            instance: self.settings.instance.clone(),
        }
    }

    /// What runs beside the reconciles now and then rather than once per reconcile: Secrets'
    /// contents no longer cached and the backoff of objects that stopped failing are forgotten.
    pub fn housekeeping(&self) {
        self.secrets.forget_deleted();
        self.backoff.forget_stale(Instant::now());
    }
}

/// A controller's own context: it reaches the shared one.
pub trait Controlled: Send + Sync + 'static {
    /// The state every controller shares.
    fn shared(&self) -> &Shared;
}

/// The context of a controller that keeps nothing of its own but the writer of its kind's
/// statuses and Events (the preview and store controllers).
pub struct WithWriter<K: Reported> {
    /// What every controller shares.
    pub shared: Arc<Shared>,
    /// The writer of the kind's statuses and Events.
    pub status: Writer<K>,
    /// The statuses written that the cache may not show yet.
    pub written: Arc<Written<K>>,
}

impl<K: Reported> WithWriter<K> {
    /// The controller's state over `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        let written = Arc::new(Written::default());
        Self {
            status: Writer::new(
                shared.client.clone(),
                shared.metrics.clone(),
                shared.reporter(),
                written.clone(),
            ),
            written,
            shared,
        }
    }

    /// Forgets what is kept for objects no longer among `cached` (every object of the kind its
    /// cache holds), and the statuses written that the cache caught up with.
    pub fn retain_cached(&self, cached: &[Arc<DeserializeGuard<K>>]) {
        let live = cached_versions(cached);
        self.written.retain(&live);
        self.status.retain(&live);
    }
}

impl<K: Reported> Controlled for WithWriter<K> {
    fn shared(&self) -> &Shared {
        &self.shared
    }
}
