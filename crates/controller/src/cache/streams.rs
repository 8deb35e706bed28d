//! The controllers' watch streams, each one on its own: its own client reporting its life to
//! [`WatchHealth`], the watch timeout of [`WatchSettings`](crate::cache::health::WatchSettings),
//! and its own backoff after an error (0.5 s doubling to 5 s, plus up to as much again of
//! jitter). Errors are logged by the [forwarding](crate::cache::forwarding) of the items and
//! never reach the controller: a kube-runtime controller holds back all of its watches
//! for one backoff (growing to 30 s and more) whenever any of them fails, so after an API server
//! restart, or a watch cache that re-initialises once etcd is back, the failures of a dozen
//! watches at once paused every watch for many minutes.

use crate::cache::cache_writer::CacheWriter;
use crate::cache::client::observed;
pub use crate::cache::forwarding::Items;
use crate::cache::forwarding::{detached, fanned, without_errors};
use crate::cache::health::WatchHealth;
use crate::cache::owner_index::Owned;
use crate::cache::owner_index::OwnerIndex;
use crate::cache::watch_scope::WatchScope;
use crate::cache::worth::{Projection, Worth};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ApiResource, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

/// The metadata of a Secret, as cached.
pub type SecretMeta = PartialObjectMeta<Secret>;

/// A kind the controllers watch.
pub trait Watched:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Watched for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// The backoff of one watch after an error, reset by its next item. It holds back only that
/// watch, so it can be short: a watch resumes at most 10 s after the API server answers again.
pub fn watch_backoff() -> watcher::ExponentialBackoff {
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(Duration::from_secs(5))
        .with_factor(2.0)
        .with_jitter()
        .without_max_times()
        .into()
}

/// The events of the watches of one kind, each with the namespace its watch covers (None:
/// every namespace).
type Tagged<K> = futures::stream::BoxStream<
    'static,
    Result<(Option<String>, watcher::Event<K>), watcher::Error>,
>;

/// The namespaced API of `K` in `ns`, or of every namespace.
fn namespaced<K: Watched>(client: Client, ns: Option<&str>) -> Api<K> {
    match ns {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    }
}

/// The flag raised once each watch feeding a cache delivered its first complete list.
struct Listed {
    flag: tokio::sync::watch::Sender<bool>,
    pending: usize,
    done: std::collections::HashSet<Option<String>>,
}

impl Listed {
    /// Notes `event` of the watch of `ns`.
    fn saw<K>(&mut self, ns: &Option<String>, event: &watcher::Event<K>) {
        if matches!(event, watcher::Event::InitDone)
            && self.done.insert(ns.clone())
            && self.done.len() >= self.pending
        {
            self.flag.send_replace(true);
        }
    }
}

/// Builds the watch streams of the controllers.
pub struct WatchStreams {
    client: Client,
    scope: WatchScope,
    health: Arc<WatchHealth>,
    /// One flag per cache, raised once its first complete list is in.
    listed: std::sync::Mutex<Vec<tokio::sync::watch::Receiver<bool>>>,
}

impl WatchStreams {
    /// Streams of `client`, in the namespaces of `scope`, reporting to `health`.
    pub fn new(client: Client, scope: WatchScope, health: Arc<WatchHealth>) -> Self {
        Self {
            client,
            scope,
            health,
            listed: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Flags that rise once each cache made so far holds its first complete list. Reconciles
    /// wait on these rather than on the caches themselves: a cache wakes only one of several
    /// tasks waiting for it, and the controllers already wait on theirs.
    pub fn listed(&self) -> Vec<tokio::sync::watch::Receiver<bool>> {
        self.listed.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The watcher configuration every watch starts from.
    pub fn config(&self) -> watcher::Config {
        self.health.settings().watcher_config()
    }

    /// The watch `name` of the objects `api` gives for a namespace (None: every namespace), one
    /// watch per namespace of the scope, each event with the namespace it came from.
    fn watch<K>(
        &self,
        name: &str,
        config: &watcher::Config,
        api: impl Fn(Client, Option<&str>) -> Api<K>,
    ) -> Tagged<K>
    where
        K: Resource + Clone + Debug + DeserializeOwned + Send + 'static,
    {
        let client = observed(self.client.clone(), self.health.stream(name));
        let namespaces: Vec<Option<String>> = match self.scope.namespaces() {
            None => vec![None],
            Some(names) => names.into_iter().map(Some).collect(),
        };
        let watches = namespaces.into_iter().map(|ns| {
            watcher(api(client.clone(), ns.as_deref()), config.clone())
                .backoff(watch_backoff())
                .map_ok(move |event| (ns.clone(), event))
                .boxed()
        });
        futures::stream::select_all(watches).boxed()
    }

    /// How many watches feed each cache: one per namespace of the scope.
    fn watches(&self) -> usize {
        self.scope.namespaces().map_or(1, |names| names.len())
    }

    /// A writer of `writer`'s store fed by [`watches`](Self::watches) watches.
    fn cache_writer<K>(&self, writer: reflector::store::Writer<K>) -> CacheWriter<K>
    where
        K: reflector::Lookup + Clone + 'static,
        K::DynamicType: Eq + std::hash::Hash + Clone,
    {
        match self.watches() {
            1 => CacheWriter::new(writer),
            _ => CacheWriter::per_namespace(writer),
        }
    }

    /// A flag of [`listed`](Self::listed) for a new cache, raised once every watch feeding it
    /// listed.
    fn listed_flag(&self) -> Listed {
        let (flag, rx) = tokio::sync::watch::channel(false);
        if let Ok(mut all) = self.listed.lock() {
            all.push(rx);
        }
        Listed {
            flag,
            pending: self.watches(),
            done: std::collections::HashSet::new(),
        }
    }

    /// A cache of the objects of `K` kept by the watch `name`, without their managedFields
    /// (which no reconcile reads: they are most of a small object's size), and the objects
    /// applied or deleted. The watch runs in a task of its own, so the cache fills and stays
    /// current whether or not the stream returned is being read.
    pub fn cached_touched<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
    ) -> (Store<K>, Items<K>) {
        let (store, items) = self.cache(name, config);
        (store, detached(items))
    }

    /// Like [`cached_touched`](Self::cached_touched), with the index of the cached objects by
    /// their controller's uid.
    pub fn cached_owned<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
    ) -> (Owned<K>, Items<K>) {
        self.owned(name, config, None)
    }

    /// Like [`cached_owned`](Self::cached_owned), an object applied going on only when what
    /// `worth` draws from it changed ([`Worth`]); the cache keeps every change.
    pub fn cached_owned_if<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
        worth: Projection<K>,
    ) -> (Owned<K>, Items<K>) {
        self.owned(name, config, Some(Worth::new(worth)))
    }

    fn owned<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
        worth: Option<Worth<K>>,
    ) -> (Owned<K>, Items<K>) {
        let owners = Arc::new(OwnerIndex::default());
        let (store, items) = self.cache_indexed(name, config, Some(owners.clone()), worth);
        (Owned { store, owners }, detached(items))
    }

    /// Like [`cached_touched`](Self::cached_touched), with the objects delivered to two
    /// consumers: one watch feeds both controllers, so the API server serves it once.
    pub fn cached_shared<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
    ) -> (Store<K>, Items<K>, Items<K>) {
        let (store, [first, second]) = self.cached_fanned(name, config);
        (store, first, second)
    }

    /// Like [`cached_touched`](Self::cached_touched), with the objects delivered to `N`
    /// consumers.
    pub fn cached_fanned<K: Watched, const N: usize>(
        &self,
        name: &str,
        config: watcher::Config,
    ) -> (Store<K>, [Items<K>; N]) {
        let (store, items) = self.cache(name, config);
        (store, fanned(items))
    }

    /// A cache of the objects of the dynamic kind `resource` (a CRD that may not be installed,
    /// such as Flux's sources), kept like [`cached_touched`](Self::cached_touched)'s.
    pub fn cached_dynamic(
        &self,
        name: &str,
        resource: &ApiResource,
        config: watcher::Config,
    ) -> (Store<DynamicObject>, Items<DynamicObject>) {
        let writer = reflector::store::Writer::new(resource.clone());
        let store = writer.as_reader();
        let mut cache = self.cache_writer(writer);
        let mut listed = self.listed_flag();
        let resource = resource.clone();
        let items = self
            .watch(name, &config, move |client, ns| match ns {
                Some(ns) => Api::<DynamicObject>::namespaced_with(client, ns, &resource),
                None => Api::all_with(client, &resource),
            })
            .map_ok(|(ns, event)| {
                (
                    ns,
                    event.modify(|object| object.managed_fields_mut().clear()),
                )
            })
            .inspect_ok(move |(ns, event)| {
                cache.apply_in(ns.as_deref(), event);
                listed.saw(ns, event);
            })
            .map_ok(|(_, event)| event)
            .touched_objects();
        (store, detached(without_errors(name.to_string(), items)))
    }

    /// One watch `name` of `K` for two readers: the objects `cached` keeps go into a cache and
    /// on to a controller as [`cached_owned_if`](Self::cached_owned_if)'s do (but a new one
    /// only when it says more than an empty one, [`Worth::unless_blank`]); the others,
    /// as listed or applied, to a reader that keeps them nowhere (the node pods' exits, read
    /// beside the deploy pods' cache: one watch of pods where there were two).
    pub fn cached_split<K: Watched + Default>(
        &self,
        name: &str,
        config: watcher::Config,
        cached: fn(&K) -> bool,
        worth: Projection<K>,
    ) -> (Store<K>, Items<K>, Items<K>) {
        let trim = |object: &mut K| object.managed_fields_mut().clear();
        let (store, events) = self.cached_events(name, config, None, trim, cached);
        let [kept, others] = fanned(without_errors(name.to_string(), events));
        let mut worth = Worth::unless_blank(worth);
        let kept = kept
            .try_filter(move |event| {
                let passes = of(event).is_none_or(cached) && worth.passes(event);
                futures::future::ready(passes)
            })
            .touched_objects()
            .boxed();
        let others = others
            .try_filter(move |event| futures::future::ready(of(event).is_some_and(|o| !cached(o))))
            .applied_objects()
            .boxed();
        (store, kept, others)
    }

    /// The metadata of the Secrets, kept by the watch `name` as [`secret_metadata`] trims it,
    /// delivered to two consumers like [`cached_shared`](Self::cached_shared)'s.
    pub fn cached_secrets(
        &self,
        name: &str,
        config: watcher::Config,
    ) -> (Store<SecretMeta>, Items<SecretMeta>, Items<SecretMeta>) {
        let (store, items) = self.cache_trimmed(name, config, None, secret_metadata, None);
        let [first, second] = fanned(items);
        (store, first, second)
    }

    /// The cache and the objects applied or deleted, not yet driven by a task.
    fn cache<K: Watched>(&self, name: &str, config: watcher::Config) -> (Store<K>, Items<K>) {
        self.cache_indexed(name, config, None, None)
    }

    /// [`cache`](Self::cache), keeping `owners` in step with the cache when given, and passing
    /// on only the changes `worth` finds worth it when given. Field managers are dropped, but
    /// for a writer through the scale subresource (a HorizontalPodAutoscaler, `kubectl
    /// scale`): spec.autoscaling names it.
    fn cache_indexed<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
        owners: Option<Arc<OwnerIndex>>,
        worth: Option<Worth<K>>,
    ) -> (Store<K>, Items<K>) {
        let trim = |object: &mut K| {
            object
                .managed_fields_mut()
                .retain(|m| m.subresource.as_deref() == Some("scale"));
        };
        self.cache_trimmed(name, config, owners, trim, worth)
    }

    /// [`cache_indexed`](Self::cache_indexed), each object trimmed by `trim` before it is kept.
    fn cache_trimmed<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
        owners: Option<Arc<OwnerIndex>>,
        trim: fn(&mut K),
        mut worth: Option<Worth<K>>,
    ) -> (Store<K>, Items<K>) {
        let (store, events) = self.cached_events(name, config, owners, trim, |_| true);
        let items = events
            .try_filter(move |event| {
                futures::future::ready(worth.as_mut().is_none_or(|w| w.passes(event)))
            })
            .touched_objects();
        (store, without_errors(name.to_string(), items))
    }

    /// The watch `name` of `K`, each object trimmed by `trim`, those `keep` keeps kept in a
    /// cache (and `owners` in step with it when given), and its events.
    fn cached_events<K: Watched>(
        &self,
        name: &str,
        config: watcher::Config,
        owners: Option<Arc<OwnerIndex>>,
        trim: fn(&mut K),
        keep: fn(&K) -> bool,
    ) -> (
        Store<K>,
        impl futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    ) {
        let (store, writer) = reflector::store();
        let mut cache = self.cache_writer(writer);
        let mut listed = self.listed_flag();
        let events = self
            .watch(name, &config, namespaced::<K>)
            .map_ok(move |(ns, event)| (ns, event.modify(trim)))
            .inspect_ok(move |(ns, event)| {
                if of(event).is_none_or(keep) {
                    cache.apply_in(ns.as_deref(), event);
                    if let Some(owners) = &owners {
                        owners.record(event);
                    }
                }
                listed.saw(ns, event);
            })
            .map_ok(|(_, event)| event);
        (store, events)
    }
}

/// What the operator keeps of a Secret's metadata: its name, namespace, uid, labels and
/// resourceVersion. Its annotations go: `kubectl apply` keeps the whole Secret, values
/// included, in `kubectl.kubernetes.io/last-applied-configuration`. So do its field managers,
/// owners and finalizers, which no reconcile reads.
pub fn secret_metadata(secret: &mut SecretMeta) {
    let meta = &mut secret.metadata;
    meta.annotations = None;
    meta.managed_fields = None;
    meta.owner_references = None;
    meta.finalizers = None;
}

/// The object of `event`, if it carries one.
fn of<K>(event: &watcher::Event<K>) -> Option<&K> {
    match event {
        watcher::Event::Apply(o) | watcher::Event::InitApply(o) | watcher::Event::Delete(o) => {
            Some(o)
        }
        watcher::Event::Init | watcher::Event::InitDone => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_watch_waits_at_most_ten_seconds() {
        let waits: Vec<Duration> = watch_backoff().take(12).collect();
        assert!(waits[0] >= Duration::from_millis(500), "{waits:?}");
        // Jitter adds up to the delay itself.
        assert!(
            waits.iter().all(|w| *w <= Duration::from_secs(10)),
            "{waits:?}"
        );
        assert!(waits[11] >= Duration::from_secs(5), "{waits:?}");
    }
}
