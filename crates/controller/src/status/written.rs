//! The statuses the operator wrote that its caches may not show yet: a read-your-writes cache
//! beside the informers. The [writer](crate::status::writer) records each status it writes
//! here; a reconcile reads an object's newest status here, so a cache that has not caught up
//! with the operator's own write never replays a step the written status already took.

use crate::locks::lock;
use crate::status::reported::Reported;
use kube::ResourceExt;
use kube::core::DeserializeGuard;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Per object uid: the status last written, with the resourceVersion of the object it was
/// computed from; see the [module](self).
pub struct Written<K: Reported> {
    statuses: Mutex<HashMap<String, (String, K::Status)>>,
}

impl<K: Reported> Default for Written<K> {
    fn default() -> Self {
        Self {
            statuses: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Reported> Written<K> {
    /// The newest status of `object`: the one written when the object was at the
    /// resourceVersion seen now (the cache has not caught up with that write), else the
    /// object's own.
    pub fn newest(&self, object: &K) -> Option<K::Status> {
        let uid = object.uid().unwrap_or_default();
        let seen = object.resource_version().unwrap_or_default();
        let mut statuses = lock(&self.statuses);
        match statuses.get(&uid) {
            Some((rv, status)) if *rv == seen => Some(status.clone()),
            Some(_) => {
                // The object seen is newer than that write: its own status is the newest.
                statuses.remove(&uid);
                object.status().cloned()
            }
            None => object.status().cloned(),
        }
    }

    /// Records that `status` was written to `object` as seen at its current resourceVersion.
    pub fn record(&self, object: &K, status: K::Status) {
        let uid = object.uid().unwrap_or_default();
        let seen = object.resource_version().unwrap_or_default();
        lock(&self.statuses).insert(uid, (seen, status));
    }

    /// Forgets every object whose uid is not in `live` (uid to the resourceVersion the cache
    /// holds), and every status the cache caught up with: an object that is not reconciled
    /// again would otherwise be kept until its next change.
    pub fn retain(&self, live: &HashMap<&str, &str>) {
        crate::map_retain::retain(&mut lock(&self.statuses), |uid, (rv, _)| {
            live.get(uid.as_str()).is_some_and(|&seen| seen == rv)
        });
    }

    /// Forgets, as [`retain`](Self::retain) does, every object that is not among `cached`
    /// (every object of the kind its cache holds).
    pub fn retain_cached(&self, cached: &[Arc<DeserializeGuard<K>>]) {
        self.retain(&cached_versions(cached));
    }
}

/// The uid of every object of `cached` that parsed, with the resourceVersion the cache holds.
pub fn cached_versions<K: kube::Resource>(
    cached: &[Arc<DeserializeGuard<K>>],
) -> HashMap<&str, &str> {
    cached
        .iter()
        .filter_map(|guard| {
            let meta = guard.0.as_ref().ok()?.meta();
            Some((
                meta.uid.as_deref()?,
                meta.resource_version.as_deref().unwrap_or_default(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{CelldObjectStore, CelldObjectStoreStatus};

    fn store(rv: &str) -> CelldObjectStore {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "platform.celld.dev/v1alpha1",
            "kind": "CelldObjectStore",
            "metadata": {"name": "s3", "namespace": "apps", "uid": "u-1", "resourceVersion": rv},
            "spec": {"endpoint": "http://127.0.0.1:9000"},
        }))
        .unwrap()
    }

    fn status(generation: i64) -> CelldObjectStoreStatus {
        CelldObjectStoreStatus {
            observed_generation: Some(generation),
            ..CelldObjectStoreStatus::default()
        }
    }

    #[test]
    fn a_written_status_is_newest_until_the_object_moves_on() {
        let written = Written::<CelldObjectStore>::default();
        assert_eq!(written.newest(&store("3")), None, "nothing written");
        written.record(&store("3"), status(1));
        assert_eq!(written.newest(&store("3")), Some(status(1)), "cache behind");
        let mut moved = store("4");
        moved.status = Some(status(2));
        assert_eq!(written.newest(&moved), Some(status(2)), "the object's own");
        assert_eq!(written.newest(&store("3")), None, "and the write forgotten");
    }

    #[test]
    fn retain_forgets_deleted_objects_and_writes_the_cache_caught_up_with() {
        let written = Written::<CelldObjectStore>::default();
        written.record(&store("3"), status(1));
        written.retain(&HashMap::from([("u-1", "3")]));
        assert!(
            written.newest(&store("3")).is_some(),
            "the cache is still at 3"
        );
        written.retain(&HashMap::from([("u-1", "4")]));
        assert_eq!(written.newest(&store("3")), None, "caught up: forgotten");
        written.record(&store("3"), status(1));
        written.retain_cached(&[Arc::new(DeserializeGuard(Ok(store("3"))))]);
        assert!(written.newest(&store("3")).is_some(), "still cached at 3");
        written.retain_cached(&[]);
        assert_eq!(written.newest(&store("3")), None, "deleted: forgotten");
    }
}
