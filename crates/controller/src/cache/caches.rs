//! What a reconcile reads, from the caches the watches keep: the fleet's children, the stores
//! and the metadata of Secrets. A reconcile at rest makes no API request: it finds every input
//! here, and only what differs from the cache is written.

use crate::cache::changes::Changes;
use crate::cache::compact::Compact;
pub use crate::cache::owner_index::Owned;
use crate::cache::owner_index::controller_uid;
use crate::cache::source_caches::SourceCaches;
use crate::children::Child;
use crate::error::Closed;
use celld_api::{CelldFleet, CelldObjectStore};
use gateway_api::httproutes::HttpRoute;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Resource;
use kube::core::{DeserializeGuard, PartialObjectMeta};
use kube::runtime::reflector::{self, ObjectRef, Store};
use std::sync::Arc;
use tracing::warn;

/// The caches of every child kind, one field per kind: adding a kind here is what makes the
/// watches, the reads and the pruning know it (see [`ChildKind`]).
#[derive(Clone)]
pub struct ChildCaches {
    /// The fleets' StatefulSets.
    pub statefulsets: Store<Compact<StatefulSet>>,
    /// Their public and peer Services.
    pub services: Store<Compact<Service>>,
    /// Their NetworkPolicies.
    pub network_policies: Store<Compact<NetworkPolicy>>,
    /// Their PodDisruptionBudgets.
    pub pod_disruption_budgets: Owned<Compact<PodDisruptionBudget>>,
    /// Their Ingresses.
    pub ingresses: Owned<Compact<Ingress>>,
    /// Their HTTPRoutes; None when the cluster did not serve the Gateway API at start.
    pub http_routes: Option<Owned<Compact<HttpRoute>>>,
}

/// A child kind as RBAC rules, the bench and the docs name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindName {
    /// API group ("" for the core group).
    pub group: String,
    /// Resource name (plural, lowercase).
    pub plural: String,
    /// Kind.
    pub kind: String,
}

fn kind_name<K: ChildKind>() -> KindName {
    KindName {
        group: K::group(&()).to_string(),
        plural: K::plural(&()).to_string(),
        kind: K::kind(&()).to_string(),
    }
}

/// What is done with each child kind's cache, in [`ChildCaches::each`].
trait VisitCache {
    /// Visits the cache of kind `K` (None when the controller keeps none).
    fn cache<K: ChildKind>(&mut self, store: Option<&Store<Compact<K>>>);
}

impl ChildCaches {
    /// Visits the cache of every child kind, one line per field in a destructure: a field
    /// added to [`ChildCaches`] and left out here is an unused binding, which the build
    /// refuses (warnings are errors). [`kinds`](Self::kinds) and [`version`](Self::version)
    /// read every kind through it.
    fn each(&self, visit: &mut impl VisitCache) {
        let ChildCaches {
            statefulsets,
            services,
            network_policies,
            pod_disruption_budgets,
            ingresses,
            http_routes,
        } = self;
        visit.cache(Some(statefulsets));
        visit.cache(Some(services));
        visit.cache(Some(network_policies));
        visit.cache(Some(&pod_disruption_budgets.store));
        visit.cache(Some(&ingresses.store));
        visit.cache(http_routes.as_ref().map(|routes| &routes.store));
    }

    /// Caches of every kind (HTTPRoutes too) that hold nothing: a struct literal, so it names
    /// every field.
    fn empty() -> Self {
        fn owned<K: Resource<DynamicType = ()> + Clone + 'static>() -> Owned<K> {
            Owned {
                store: reflector::store().0,
                owners: Arc::default(),
            }
        }
        Self {
            statefulsets: reflector::store().0,
            services: reflector::store().0,
            network_policies: reflector::store().0,
            pod_disruption_budgets: owned(),
            ingresses: owned(),
            http_routes: Some(owned()),
        }
    }

    /// Every child kind the operator owns, one per field of [`ChildCaches`] (and of
    /// [`Plan`](crate::fleet::plan::Plan)): the list the RBAC rules are generated from.
    pub fn kinds() -> Vec<KindName> {
        struct Kinds(Vec<KindName>);
        impl VisitCache for Kinds {
            fn cache<K: ChildKind>(&mut self, _: Option<&Store<Compact<K>>>) {
                self.0.push(kind_name::<K>());
            }
        }
        let mut kinds = Kinds(Vec::new());
        Self::empty().each(&mut kinds);
        kinds.0
    }

    /// The resourceVersion of the cached child `kind`/`name` of namespace `ns`; None when the
    /// cache does not hold it.
    pub fn version(&self, ns: &str, kind: &str, name: &str) -> Option<String> {
        struct Version<'a> {
            ns: &'a str,
            name: &'a str,
            kind: &'a str,
            found: Option<String>,
        }
        impl VisitCache for Version<'_> {
            fn cache<K: ChildKind>(&mut self, store: Option<&Store<Compact<K>>>) {
                if K::kind(&()) != self.kind {
                    return;
                }
                let object = ObjectRef::new(self.name).within(self.ns);
                self.found = store
                    .and_then(|store| store.get(&object))
                    .and_then(|k| k.meta().resource_version.clone());
            }
        }
        let mut version = Version {
            ns,
            name,
            kind,
            found: None,
        };
        self.each(&mut version);
        version.found
    }
}

/// Every cache a fleet reconcile reads.
#[derive(Clone)]
pub struct Caches {
    /// The CelldFleets.
    pub fleets: Store<DeserializeGuard<CelldFleet>>,
    /// The children.
    pub children: ChildCaches,
    /// The CelldObjectStores.
    pub stores: Store<DeserializeGuard<CelldObjectStore>>,
    /// The metadata of Secrets (their contents are read once per resourceVersion).
    pub secrets: Store<PartialObjectMeta<Secret>>,
    /// Deploy Jobs, their pods and Flux sources, for fleets with spec.source.
    pub source: SourceCaches,
    /// One flag per cache, raised once it holds its first complete list.
    listed: Vec<tokio::sync::watch::Receiver<bool>>,
    /// The changes the fleets' watch brought to the fleets' cache.
    pub fleets_moved: Changes,
}

/// A child kind with a cache in [`ChildCaches`].
pub trait ChildKind: Child {
    /// The cache of this kind, if the controller keeps one.
    fn cache(caches: &ChildCaches) -> Option<&Store<Compact<Self>>>;
}

/// A child kind the spec may ask for or not: the fleet's objects of it that the plan no longer
/// holds are pruned.
pub trait OptionalKind: ChildKind {
    /// The cache of this kind with its index by owner, if the controller keeps one.
    fn owned(caches: &ChildCaches) -> Option<&Owned<Compact<Self>>>;
}

impl ChildKind for StatefulSet {
    fn cache(caches: &ChildCaches) -> Option<&Store<Compact<Self>>> {
        Some(&caches.statefulsets)
    }
}

impl ChildKind for Service {
    fn cache(caches: &ChildCaches) -> Option<&Store<Compact<Self>>> {
        Some(&caches.services)
    }
}

impl ChildKind for NetworkPolicy {
    fn cache(caches: &ChildCaches) -> Option<&Store<Compact<Self>>> {
        Some(&caches.network_policies)
    }
}

impl ChildKind for PodDisruptionBudget {
    fn cache(caches: &ChildCaches) -> Option<&Store<Compact<Self>>> {
        Some(&caches.pod_disruption_budgets.store)
    }
}

impl OptionalKind for PodDisruptionBudget {
    fn owned(caches: &ChildCaches) -> Option<&Owned<Compact<Self>>> {
        Some(&caches.pod_disruption_budgets)
    }
}

impl ChildKind for Ingress {
    fn cache(caches: &ChildCaches) -> Option<&Store<Compact<Self>>> {
        Some(&caches.ingresses.store)
    }
}

impl OptionalKind for Ingress {
    fn owned(caches: &ChildCaches) -> Option<&Owned<Compact<Self>>> {
        Some(&caches.ingresses)
    }
}

impl ChildKind for HttpRoute {
    fn cache(caches: &ChildCaches) -> Option<&Store<Compact<Self>>> {
        caches.http_routes.as_ref().map(|routes| &routes.store)
    }
}

impl OptionalKind for HttpRoute {
    fn owned(caches: &ChildCaches) -> Option<&Owned<Compact<Self>>> {
        caches.http_routes.as_ref()
    }
}

impl Caches {
    /// The caches, with the flags that tell when each holds its first complete list.
    pub fn new(
        fleets: Store<DeserializeGuard<CelldFleet>>,
        children: ChildCaches,
        stores: Store<DeserializeGuard<CelldObjectStore>>,
        secrets: Store<PartialObjectMeta<Secret>>,
        source: SourceCaches,
        listed: Vec<tokio::sync::watch::Receiver<bool>>,
        fleets_moved: Changes,
    ) -> Self {
        Self {
            fleets,
            children,
            stores,
            secrets,
            source,
            listed,
            fleets_moved,
        }
    }

    /// Waits until every cache holds its first complete list, so a reconcile never mistakes a
    /// cache still filling for objects that do not exist.
    pub async fn ready(&self) -> Result<(), Closed> {
        for flag in &self.listed {
            flag.clone()
                .wait_for(|listed| *listed)
                .await
                .map_err(|_| Closed)?;
        }
        Ok(())
    }

    /// The store `name` of namespace `ns` as cached.
    pub fn store(&self, ns: &str, name: &str) -> Option<Arc<DeserializeGuard<CelldObjectStore>>> {
        self.stores.get(&ObjectRef::new(name).within(ns))
    }

    /// The fleet `name` of namespace `ns` as cached, if it parses.
    pub fn fleet(&self, ns: &str, name: &str) -> Option<CelldFleet> {
        let guard = self.fleets.get(&ObjectRef::new(name).within(ns))?;
        guard.0.as_ref().ok().cloned()
    }
}

/// The cached child `name` of namespace `ns`, parsed. A cached object that does not parse as
/// its kind (which the watch parsed it as) counts as not cached: the apply that follows is
/// then unconditional.
pub fn child<K: ChildKind>(store: &Store<Compact<K>>, ns: &str, name: &str) -> Option<K> {
    let compact = store.get(&ObjectRef::new(name).within(ns))?;
    compact
        .expand()
        .inspect_err(|e| warn!(kind = %K::kind(&()), %ns, %name, error = %e, "a cached child does not parse"))
        .ok()
}

/// The cached child `ns/name` when it is newer than `than` (the same spec or a later one, in
/// another version): parsed only then. None when `than` is None or the cache holds nothing
/// newer.
pub fn newer<K: ChildKind>(
    store: &Store<Compact<K>>,
    ns: &str,
    name: &str,
    than: Option<&K>,
) -> Option<K> {
    let than = than?.meta();
    let compact = store.get(&ObjectRef::new(name).within(ns))?;
    let cached = compact.meta();
    if cached.resource_version == than.resource_version || cached.generation < than.generation {
        return None;
    }
    compact
        .expand()
        .inspect_err(|e| warn!(kind = %K::kind(&()), %ns, %name, error = %e, "a cached child does not parse"))
        .ok()
}

/// Names of the cached children in namespace `ns` whose controller is the object `owner_uid`.
pub fn owned_by<K: ChildKind>(owned: &Owned<Compact<K>>, ns: &str, owner_uid: &str) -> Vec<String> {
    owned
        .owners
        .owned_by(owner_uid)
        .into_iter()
        .filter(|name| {
            owned
                .store
                .get(&ObjectRef::new(name).within(ns))
                .is_some_and(|k| controller_uid(k.as_ref()) == Some(owner_uid))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::owner_index::OwnerIndex;
    use crate::children::fixtures;
    use std::collections::BTreeSet;

    #[test]
    fn every_planned_kind_is_cached_watched_and_granted() {
        let listed: BTreeSet<String> = ChildCaches::kinds().into_iter().map(|k| k.kind).collect();
        let mut planned = BTreeSet::new();
        for spec in [fixtures::FULL, fixtures::GATEWAY] {
            let fleet = fixtures::fleet(spec);
            // Plan::children names every field of the plan (no `..`).
            let plan =
                crate::fleet::plan::plan(&fixtures::desired(&fleet), true, Default::default());
            planned.extend(
                plan.children()
                    .into_iter()
                    .map(|(kind, _)| kind.into_owned()),
            );
        }
        assert_eq!(planned, listed);
    }

    fn pdb(name: &str, owner: &str) -> Compact<PodDisruptionBudget> {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "team",
                "ownerReferences": [{"apiVersion": "platform.celld.dev/v1alpha1",
                    "kind": "CelldFleet", "name": "f", "uid": owner, "controller": true}]},
        }))
        .expect("pdb")
    }

    #[test]
    fn owned_children_are_those_the_cache_still_shows_controlled_by_the_owner() {
        use kube::runtime::watcher::Event;
        let (store, mut writer) = kube::runtime::reflector::store();
        let owned = Owned {
            store,
            owners: Arc::new(OwnerIndex::default()),
        };
        for event in [
            Event::Apply(pdb("web", "u1")),
            Event::Apply(pdb("old", "u1")),
            Event::Apply(pdb("api", "u2")),
        ] {
            writer.apply_watcher_event(&event);
            owned.owners.record(&event);
        }
        // The owner reference of "old" edited by hand; the index keeps its entry under u1.
        let moved = Event::Apply(pdb("old", "u2"));
        writer.apply_watcher_event(&moved);
        owned.owners.record(&moved);
        assert_eq!(owned_by(&owned, "team", "u1"), vec!["web"]);
        let mut u2 = owned_by(&owned, "team", "u2");
        u2.sort();
        assert_eq!(u2, vec!["api", "old"]);
        assert!(
            owned_by(&owned, "other", "u1").is_empty(),
            "another namespace"
        );
    }

    #[test]
    fn a_childs_version_is_read_from_its_kinds_cache() {
        use kube::runtime::watcher::Event;
        let mut caches = ChildCaches::empty();
        let (store, mut writer) = kube::runtime::reflector::store();
        let mut web = pdb("web", "u1");
        web.meta_mut().resource_version = Some("42".into());
        writer.apply_watcher_event(&Event::Apply(web));
        caches.pod_disruption_budgets.store = store;
        assert_eq!(
            caches
                .version("team", "PodDisruptionBudget", "web")
                .as_deref(),
            Some("42")
        );
        assert_eq!(
            caches.version("team", "Ingress", "web"),
            None,
            "another kind"
        );
        assert_eq!(caches.version("team", "PodDisruptionBudget", "api"), None);
        assert_eq!(caches.version("other", "PodDisruptionBudget", "web"), None);
    }
}
