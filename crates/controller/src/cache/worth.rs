//! Which changes of a watched object are worth a reconcile of the fleet it belongs to: a kind
//! whose objects change far more often than anything a reconcile reads from them (a deploy
//! Job's counters, its pod's scheduling and start-up) passes on only the changes of what the
//! reconcile reads, [`Worth::passes`]. The cache is kept from every event all the same.

use kube::Resource;
use kube::runtime::watcher;
use std::collections::HashMap;

/// What a reconcile reads from an object of `K`, hashed: a change of anything else is not
/// worth one.
pub type Projection<K> = fn(&K) -> u64;

/// The last projection passed on for each object of a watch, by uid.
pub struct Worth<K> {
    project: Projection<K>,
    /// The projection of an empty object, when a new object that says no more than that (a
    /// deploy pod just made, not yet waiting for anything) is not worth a reconcile.
    blank: Option<u64>,
    passed: HashMap<String, u64>,
}

impl<K: Resource + Default> Worth<K> {
    /// Filters by `project`, a new object going on only when its projection differs from an
    /// empty object's.
    pub fn unless_blank(project: Projection<K>) -> Self {
        Self {
            project,
            blank: Some(project(&K::default())),
            passed: HashMap::new(),
        }
    }
}

impl<K: Resource> Worth<K> {
    /// Filters by `project`, every new object going on.
    pub fn new(project: Projection<K>) -> Self {
        Self {
            project,
            blank: None,
            passed: HashMap::new(),
        }
    }

    /// Whether `event` goes on to the controller: an object applied whose projection changed
    /// since the last passed on (a new one: see [`new`](Self::new) and
    /// [`unless_blank`](Self::unless_blank)), every object deleted or (re)listed.
    pub fn passes(&mut self, event: &watcher::Event<K>) -> bool {
        match event {
            // A (re)list may follow missed changes and deletions: everything listed goes on,
            // and what was kept of the objects gone since is forgotten.
            watcher::Event::Init => {
                self.passed.clear();
                true
            }
            watcher::Event::InitApply(object) => {
                self.record(object);
                true
            }
            watcher::Event::InitDone => true,
            watcher::Event::Apply(object) => self.record(object),
            watcher::Event::Delete(object) => {
                if let Some(uid) = object.meta().uid.as_deref() {
                    self.passed.remove(uid);
                }
                true
            }
        }
    }

    /// Records `object`'s projection; whether it differs from the one recorded before.
    fn record(&mut self, object: &K) -> bool {
        let Some(uid) = object.meta().uid.clone() else {
            return true;
        };
        let projection = (self.project)(object);
        match (self.passed.insert(uid, projection), self.blank) {
            (Some(before), _) | (None, Some(before)) => before != projection,
            (None, None) => true,
        }
    }
}

/// `value` hashed, for a [`Projection`].
pub fn hashed(value: impl std::hash::Hash) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::ObjectMeta;

    fn pod(uid: &str, phase: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("p".into()),
                uid: Some(uid.into()),
                ..ObjectMeta::default()
            },
            status: Some(k8s_openapi::api::core::v1::PodStatus {
                phase: Some(phase.into()),
                ..Default::default()
            }),
            ..Pod::default()
        }
    }

    fn phase(pod: &Pod) -> u64 {
        hashed(pod.status.as_ref().and_then(|s| s.phase.as_deref()))
    }

    #[test]
    fn only_a_change_of_the_projection_a_deletion_or_a_list_goes_on() {
        let apply = |p| watcher::Event::Apply(p);
        let mut blank = pod("n", "");
        blank.status = None;
        assert!(Worth::new(phase as Projection<Pod>).passes(&apply(blank.clone())));
        let mut worth = Worth::unless_blank(phase as Projection<Pod>);
        assert!(!worth.passes(&apply(blank)), "new, saying nothing");
        assert!(
            worth.passes(&apply(pod("a", "Pending"))),
            "new, with a phase"
        );
        assert!(!worth.passes(&apply(pod("a", "Pending"))), "the same");
        assert!(worth.passes(&apply(pod("a", "Running"))), "changed");
        assert!(worth.passes(&apply(pod("b", "Running"))), "another, new");
        assert!(
            worth.passes(&watcher::Event::Delete(pod("a", "Running"))),
            "deleted"
        );
        assert!(worth.passes(&apply(pod("a", "Running"))), "forgotten");
        assert!(worth.passes(&watcher::Event::Init));
        assert!(worth.passes(&watcher::Event::InitApply(pod("b", "Running"))));
        assert!(worth.passes(&watcher::Event::InitDone));
        assert!(!worth.passes(&apply(pod("b", "Running"))), "listed");
    }
}
