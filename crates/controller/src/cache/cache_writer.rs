//! A watch's events applied to its cache (kube's reflector store), giving back the room of
//! deleted objects. kube's store is a hash map that never shrinks: after a few hundred fleets
//! were deleted, each kind's store kept room for all of them (tens of KiB each), on memory pages
//! the rest of the heap then could not give back either. When a store falls to a quarter of the
//! most it held since it was last built, it is built again from what it holds, through the
//! events of a relist: readers see the old map until the new one replaces it whole.
//!
//! A store may be fed by several watches, one per namespace (`--namespaces`): a relist of one
//! namespace then replaces that namespace's objects only, the others kept as they are.

use crate::map_retain::worth_shrinking;
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{Lookup, Store};
use kube::runtime::watcher::Event;
use std::collections::HashMap;
use std::hash::Hash;

/// The writing end of one watch's store.
pub struct CacheWriter<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    writer: Writer<K>,
    reader: Store<K>,
    /// The most objects the store held since it was last built.
    peak: usize,
    /// Between a relist's first and last event: the writer builds a new map then.
    listing: bool,
    /// With one watch per namespace: the objects of each namespace's relist under way.
    relists: Option<HashMap<String, Vec<K>>>,
}

impl<K> CacheWriter<K>
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    /// Writes the store of `writer`; a watch starts with a list.
    pub fn new(writer: Writer<K>) -> Self {
        Self {
            reader: writer.as_reader(),
            writer,
            peak: 0,
            listing: true,
            relists: None,
        }
    }

    /// Writes the store of `writer`, fed by one watch per namespace.
    pub fn per_namespace(writer: Writer<K>) -> Self {
        Self {
            listing: false,
            relists: Some(HashMap::new()),
            ..Self::new(writer)
        }
    }

    /// Applies one event of the watch of `namespace`: with one watch per namespace, a relist
    /// gathers its objects and then replaces those of its namespace in one swap; otherwise as
    /// [`apply`](Self::apply).
    pub fn apply_in(&mut self, namespace: Option<&str>, event: &Event<K>) {
        let (Some(relists), Some(ns)) = (self.relists.as_mut(), namespace) else {
            return self.apply(event);
        };
        match event {
            Event::Init => {
                relists.insert(ns.to_string(), Vec::new());
            }
            Event::InitApply(object) => relists
                .entry(ns.to_string())
                .or_default()
                .push(object.clone()),
            Event::InitDone => {
                let listed = relists.remove(ns).unwrap_or_default();
                self.replace_namespace(ns, listed);
            }
            Event::Apply(_) | Event::Delete(_) => self.apply(event),
        }
    }

    /// Builds the store again from the objects of other namespaces it holds and `listed`.
    fn replace_namespace(&mut self, ns: &str, listed: Vec<K>) {
        self.writer.apply_watcher_event(&Event::Init);
        for object in self.reader.state() {
            if object.namespace().as_deref() != Some(ns) {
                self.writer
                    .apply_watcher_event(&Event::InitApply(K::clone(&object)));
            }
        }
        for object in listed {
            self.writer.apply_watcher_event(&Event::InitApply(object));
        }
        self.writer.apply_watcher_event(&Event::InitDone);
        self.peak = self.reader.len();
    }

    /// Applies one event of the watch.
    pub fn apply(&mut self, event: &Event<K>) {
        self.writer.apply_watcher_event(event);
        match event {
            Event::Init => self.listing = true,
            Event::InitApply(_) => {}
            Event::InitDone => {
                self.listing = false;
                self.peak = self.reader.len();
            }
            Event::Apply(_) => self.peak = self.peak.max(self.reader.len()),
            Event::Delete(_) => {
                if !self.listing && worth_shrinking(self.reader.len(), self.peak) {
                    self.rebuild();
                }
            }
        }
    }

    /// Builds the store again from what it holds, sized for it.
    fn rebuild(&mut self) {
        self.writer.apply_watcher_event(&Event::Init);
        for object in self.reader.state() {
            self.writer
                .apply_watcher_event(&Event::InitApply(K::clone(&object)));
        }
        self.writer.apply_watcher_event(&Event::InitDone);
        self.peak = self.reader.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector::{self, ObjectRef};
    use std::sync::Arc;

    fn object(i: usize) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("cm-{i}")),
                namespace: Some("ns".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn cached(store: &Store<ConfigMap>, i: usize) -> Option<Arc<ConfigMap>> {
        store.get(&ObjectRef::new(&format!("cm-{i}")).within("ns"))
    }

    /// A store that listed nothing and then saw `n` objects applied.
    fn filled(n: usize) -> (CacheWriter<ConfigMap>, Store<ConfigMap>) {
        let (store, writer) = reflector::store();
        let mut cache = CacheWriter::new(writer);
        cache.apply(&Event::Init);
        cache.apply(&Event::InitDone);
        for i in 0..n {
            cache.apply(&Event::Apply(object(i)));
        }
        (cache, store)
    }

    fn delete(cache: &mut CacheWriter<ConfigMap>, objects: std::ops::Range<usize>) {
        for i in objects {
            cache.apply(&Event::Delete(object(i)));
        }
    }

    #[test]
    fn deleting_most_objects_rebuilds_the_store_with_the_rest() {
        let (mut cache, store) = filled(300);
        let kept = cached(&store, 299).unwrap();
        delete(&mut cache, 0..224);
        assert_eq!(store.len(), 76);
        assert!(
            Arc::ptr_eq(&kept, &cached(&store, 299).unwrap()),
            "above a quarter of the peak the store is left as it is"
        );
        cache.apply(&Event::Delete(object(224)));
        assert_eq!(store.len(), 75);
        let after = cached(&store, 299).unwrap();
        assert!(!Arc::ptr_eq(&kept, &after), "rebuilt once at a quarter");
        assert_eq!(*after, object(299));
        assert!(cached(&store, 0).is_none());
        assert!((225..300).all(|i| cached(&store, i).as_deref() == Some(&object(i))));

        // The peak starts again from the rebuilt store: the next deletions leave it alone.
        cache.apply(&Event::Delete(object(225)));
        assert!(Arc::ptr_eq(&after, &cached(&store, 299).unwrap()));
    }

    #[test]
    fn a_relist_under_way_is_never_rebuilt_and_keeps_its_objects() {
        let (mut cache, store) = filled(300);
        cache.apply(&Event::Init);
        cache.apply(&Event::InitApply(object(7)));
        // Not sent by a watcher during a relist; a rebuild here would lose the relist's objects.
        cache.apply(&Event::Delete(object(1)));
        cache.apply(&Event::InitApply(object(8)));
        cache.apply(&Event::InitDone);
        assert_eq!(store.len(), 2);
        assert!(cached(&store, 7).is_some() && cached(&store, 8).is_some());
    }

    fn in_namespace(i: usize, ns: &str) -> ConfigMap {
        let mut object = object(i);
        object.metadata.namespace = Some(ns.into());
        object
    }

    #[test]
    fn a_namespace_relisted_replaces_its_own_objects_only() {
        let (store, writer) = reflector::store();
        let mut cache = CacheWriter::per_namespace(writer);
        for ns in ["a", "b"] {
            cache.apply_in(Some(ns), &Event::Init);
            cache.apply_in(Some(ns), &Event::InitApply(in_namespace(1, ns)));
            cache.apply_in(Some(ns), &Event::InitApply(in_namespace(2, ns)));
        }
        cache.apply_in(Some("a"), &Event::InitDone);
        assert_eq!(store.len(), 2, "a's list is in, b's still under way");
        cache.apply_in(Some("b"), &Event::InitDone);
        assert_eq!(store.len(), 4);

        // b relists without its cm-2, while a's objects change.
        cache.apply_in(Some("b"), &Event::Init);
        cache.apply_in(Some("b"), &Event::InitApply(in_namespace(1, "b")));
        cache.apply_in(Some("a"), &Event::Apply(in_namespace(3, "a")));
        cache.apply_in(Some("b"), &Event::InitDone);
        let mut held: Vec<(String, String)> = store
            .state()
            .iter()
            .map(|o| {
                (
                    ResourceExt::namespace(o.as_ref()).unwrap_or_default(),
                    o.name_any(),
                )
            })
            .collect();
        held.sort();
        let want: Vec<(String, String)> = [("a", 1), ("a", 2), ("a", 3), ("b", 1)]
            .iter()
            .map(|(ns, i)| (ns.to_string(), format!("cm-{i}")))
            .collect();
        assert_eq!(held, want);
    }

    #[test]
    fn a_small_store_is_left_as_it_is() {
        let (mut cache, store) = filled(40);
        let kept = cached(&store, 39).unwrap();
        delete(&mut cache, 0..39);
        assert_eq!(store.len(), 1);
        assert!(Arc::ptr_eq(&kept, &cached(&store, 39).unwrap()));
    }
}
