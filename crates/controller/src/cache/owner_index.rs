//! The objects of one kind that each owner controls, kept beside the kind's cache: a reconcile
//! finds its fleet's objects to prune by the fleet's uid, where a scan of the cache would read
//! every fleet's objects (a thousand fleets starting together made those scans the operator's
//! largest cost). The index follows the watch's events, relists included; what it lists is
//! checked against the cache, so an entry left behind by an edited owner reference is harmless.

use crate::map_retain;
use kube::Resource;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::Event;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Owner uid → names of the objects it controls.
type ByOwner = HashMap<String, Vec<String>>;

/// The index of one kind's cached objects by the uid of their controller.
#[derive(Debug, Default)]
pub struct OwnerIndex {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    owned: ByOwner,
    /// The index a relist is building, which replaces `owned` when the relist ends.
    relisting: Option<ByOwner>,
}

/// The uid of the object's controller (the owner reference with `controller: true`).
pub fn controller_uid<K: Resource>(object: &K) -> Option<&str> {
    object
        .meta()
        .owner_references
        .as_deref()?
        .iter()
        .find(|o| o.controller == Some(true))
        .map(|o| o.uid.as_str())
}

fn name<K: Resource>(object: &K) -> Option<&str> {
    object.meta().name.as_deref()
}

fn add<K: Resource>(owned: &mut ByOwner, object: &K) {
    if let (Some(uid), Some(name)) = (controller_uid(object), name(object)) {
        let names = owned.entry(uid.to_string()).or_default();
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
}

fn remove<K: Resource>(owned: &mut ByOwner, object: &K) {
    let (Some(uid), Some(name)) = (controller_uid(object), name(object)) else {
        return;
    };
    if let Some(names) = owned.get_mut(uid) {
        names.retain(|n| n != name);
        if names.is_empty() {
            owned.remove(uid);
            map_retain::shrink(owned);
        }
    }
}

impl OwnerIndex {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Follows one event of the kind's watch.
    pub fn record<K: Resource>(&self, event: &Event<K>) {
        let mut state = self.lock();
        match event {
            Event::Apply(object) => add(&mut state.owned, object),
            Event::Delete(object) => remove(&mut state.owned, object),
            Event::Init => state.relisting = Some(ByOwner::new()),
            Event::InitApply(object) => {
                if let Some(relisting) = state.relisting.as_mut() {
                    add(relisting, object);
                }
            }
            Event::InitDone => {
                if let Some(relisted) = state.relisting.take() {
                    state.owned = relisted;
                }
            }
        }
    }

    /// Names of the objects last seen controlled by the owner `uid`.
    pub fn owned_by(&self, uid: &str) -> Vec<String> {
        self.lock().owned.get(uid).cloned().unwrap_or_default()
    }

    /// How many owners the index holds objects of.
    #[cfg(test)]
    fn owners(&self) -> usize {
        self.lock().owned.len()
    }
}

/// The cache of a child kind the spec may ask for or not, with its objects indexed by owner
/// (to find what to prune).
#[derive(Clone)]
pub struct Owned<K: Resource<DynamicType = ()> + 'static> {
    /// The objects.
    pub store: Store<K>,
    /// Their names by the uid of their controller.
    pub owners: Arc<OwnerIndex>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

    fn pdb(name: &str, owner: &str, controller: bool) -> PodDisruptionBudget {
        PodDisruptionBudget {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("team".into()),
                owner_references: Some(vec![OwnerReference {
                    uid: owner.into(),
                    controller: Some(controller),
                    ..OwnerReference::default()
                }]),
                ..ObjectMeta::default()
            },
            ..PodDisruptionBudget::default()
        }
    }

    #[test]
    fn lists_what_each_controller_owns_until_it_is_deleted() {
        let index = OwnerIndex::default();
        index.record(&Event::Apply(pdb("web", "u1", true)));
        index.record(&Event::Apply(pdb("web", "u1", true)));
        index.record(&Event::Apply(pdb("old-web", "u1", true)));
        index.record(&Event::Apply(pdb("api", "u2", true)));
        index.record(&Event::Apply(pdb("lent", "u3", false)));
        assert_eq!(index.owned_by("u1"), vec!["web", "old-web"]);
        assert_eq!(index.owned_by("u2"), vec!["api"]);
        assert!(index.owned_by("u3").is_empty(), "not its controller");
        index.record(&Event::Delete(pdb("web", "u1", true)));
        index.record(&Event::Delete(pdb("api", "u2", true)));
        assert_eq!(index.owned_by("u1"), vec!["old-web"]);
        assert!(index.owned_by("u2").is_empty());
        assert_eq!(index.owners(), 1, "an owner with nothing left is forgotten");
    }

    #[test]
    fn a_relist_replaces_the_index_when_it_ends() {
        let index = OwnerIndex::default();
        index.record(&Event::Apply(pdb("gone", "u1", true)));
        index.record(&Event::<PodDisruptionBudget>::Init);
        index.record(&Event::InitApply(pdb("web", "u2", true)));
        assert_eq!(
            index.owned_by("u1"),
            vec!["gone"],
            "the index in use until the relist ends"
        );
        index.record(&Event::<PodDisruptionBudget>::InitDone);
        assert!(index.owned_by("u1").is_empty());
        assert_eq!(index.owned_by("u2"), vec!["web"]);
    }

    #[test]
    fn an_index_emptied_by_deletions_gives_back_its_room() {
        let index = OwnerIndex::default();
        for i in 0..300 {
            index.record(&Event::Apply(pdb("web", &format!("u{i}"), true)));
        }
        for i in 0..300 {
            index.record(&Event::Delete(pdb("web", &format!("u{i}"), true)));
        }
        assert_eq!(index.owners(), 0);
        assert!(index.lock().owned.capacity() <= 64);
    }
}
