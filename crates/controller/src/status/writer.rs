//! The one writer of statuses and Events, for fleets, previews and stores alike (as linkerd's
//! policy controller patches every route kind through one `patch_status`). A controller
//! computes the status it wants; the writer compares it with the newest one it knows, writes it
//! with server-side apply only when it differs, remembers what it wrote (so a reconcile that
//! sees the object before the cache caught up with the write starts from the written status,
//! and never replays a step), publishes the Events the change is worth, and counts every
//! failure. Writes of one object are serialized by its [lock](Writer::lock).

use crate::children::MANAGER;
use crate::error::Error;
use crate::locks::lock;
use crate::metrics::Metrics;
use crate::status::note::Note;
use crate::status::reported::Reported;
use celld_api::reasons::Reason;
use kube::api::{Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::runtime::events::{Event, Recorder, Reporter};
use kube::{Api, Client, Resource, ResourceExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tracing::warn;

/// Writes the statuses and Events of objects of kind `K`; see the [module](self).
pub struct Writer<K: Reported> {
    client: Client,
    metrics: Arc<Metrics>,
    /// Who publishes the Events.
    reporter: Reporter,
    /// Per object uid: the status last written, with the resourceVersion of the object it was
    /// computed from, and the lock of its writes.
    objects: Mutex<HashMap<String, Entry<K::Status>>>,
}

struct Entry<S> {
    written: Option<(String, S)>,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl<S> Default for Entry<S> {
    fn default() -> Self {
        Self {
            written: None,
            lock: Arc::default(),
        }
    }
}

/// The uid of every object of `cached` that parsed, with the resourceVersion the cache holds.
pub fn cached_versions<K: Resource>(cached: &[Arc<DeserializeGuard<K>>]) -> HashMap<&str, &str> {
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

/// A status that differs from the newest one known.
#[derive(Debug)]
pub struct Update<S> {
    /// The newest status known before this one.
    pub previous: Option<S>,
    /// The status to write.
    pub status: S,
}

impl<K: Reported> Writer<K> {
    /// A writer sending through `client` (which counts and fences its requests), publishing
    /// Events as `reporter`.
    pub fn new(client: Client, metrics: Arc<Metrics>, reporter: Reporter) -> Self {
        Self {
            client,
            metrics,
            reporter,
            objects: Mutex::new(HashMap::new()),
        }
    }

    /// The lock that serializes the status writes of the object `uid`.
    pub fn lock(&self, uid: &str) -> Arc<tokio::sync::Mutex<()>> {
        lock(&self.objects)
            .entry(uid.to_string())
            .or_default()
            .lock
            .clone()
    }

    /// Counts `reasons`, the failures a reconcile met.
    pub fn count<'a>(&self, reasons: impl IntoIterator<Item = &'a Reason>) {
        for reason in reasons {
            self.metrics.failed(*reason);
        }
    }

    /// The newest status of `object` this writer knows: the one it wrote when the object was
    /// at the resourceVersion seen now (the cache has not caught up with that write), else the
    /// object's own. A step that builds on its last status reads it here, so a stale cache
    /// never replays a step already taken.
    pub fn latest(&self, object: &K) -> Option<K::Status> {
        let uid = object.uid().unwrap_or_default();
        let seen = object.resource_version().unwrap_or_default();
        let mut objects = lock(&self.objects);
        let Some(entry) = objects.get_mut(&uid) else {
            return object.status().cloned();
        };
        match &entry.written {
            Some((rv, status)) if *rv == seen => Some(status.clone()),
            Some(_) => {
                // The object seen is newer than that write: its own status is the one to
                // start from.
                entry.written = None;
                object.status().cloned()
            }
            None => object.status().cloned(),
        }
    }

    /// The status `compute` makes from the newest one known, when it differs from it.
    pub fn next(
        &self,
        object: &K,
        compute: impl FnOnce(Option<&K::Status>) -> K::Status,
    ) -> Option<Update<K::Status>> {
        let previous = self.latest(object);
        let status = compute(previous.as_ref());
        (previous.as_ref() != Some(&status)).then_some(Update { previous, status })
    }

    /// Writes `update` to `object` with server-side apply, remembers it, then publishes the
    /// Events `notes` gives for the change. A failed write is counted under its reason.
    pub async fn write(
        &self,
        object: &K,
        update: Update<K::Status>,
        notes: impl FnOnce(Option<&K::Status>, &K::Status) -> Vec<Note>,
    ) -> Result<(), Error> {
        let written = self.apply(object, &update.status).await;
        if let Err(e) = &written {
            self.metrics.failed(e.reason());
        }
        written?;
        let notes = notes(update.previous.as_ref(), &update.status);
        let uid = object.uid().unwrap_or_default();
        let seen = object.resource_version().unwrap_or_default();
        lock(&self.objects).entry(uid).or_default().written = Some((seen, update.status));
        self.send(object, notes).await;
        Ok(())
    }

    /// Writes the status `compute` makes when it differs from the newest one known, then the
    /// Events `notes` gives for the change. Returns whether it wrote.
    pub async fn publish(
        &self,
        object: &K,
        compute: impl FnOnce(Option<&K::Status>) -> K::Status,
        notes: impl FnOnce(Option<&K::Status>, &K::Status) -> Vec<Note>,
    ) -> Result<bool, Error> {
        let lock = self.lock(&object.uid().unwrap_or_default());
        let _writing = lock.lock().await;
        match self.next(object, compute) {
            Some(update) => self.write(object, update, notes).await.map(|()| true),
            None => Ok(false),
        }
    }

    /// Says on `object` that its reconcile failed with `error`, unless its kind's reconcile
    /// reports its failures itself ([`Reported::failed`]): counts it, writes it into the status
    /// and publishes one Warning the first time (a retry that fails the same way finds it in
    /// the status and stays quiet).
    pub async fn failed(&self, object: &K, error: &Error) {
        if !K::says_failures() {
            return;
        }
        let reason = error.reason();
        let message = error.to_string();
        let generation = object.meta().generation;
        let lock = self.lock(&object.uid().unwrap_or_default());
        let _writing = lock.lock().await;
        let latest = self.latest(object);
        let Some(status) = K::failed(latest.as_ref(), reason, &message, generation) else {
            return;
        };
        self.metrics.failed(reason);
        if latest.as_ref() == Some(&status) {
            return;
        }
        let update = Update {
            previous: latest,
            status,
        };
        let notes = |_: Option<&K::Status>, _: &K::Status| {
            vec![Note::new(
                kube::runtime::events::EventType::Warning,
                reason.as_str(),
                message.clone(),
            )]
        };
        if let Err(e) = self.write(object, update, notes).await {
            warn!(kind = <K as Reported>::KIND, name = %object.name_any(), error = %e, "the failure could not be written to the status");
        }
    }

    /// Publishes `notes` on `object`. A recorder per Event: kube's Recorder keeps every Event
    /// it published for six minutes, to count repeats as a series; this writer publishes an
    /// Event once per change, so a recorder per Event keeps none of them in memory.
    pub async fn send(&self, object: &K, notes: Vec<Note>) {
        for note in notes {
            let event = Event {
                type_: note.type_,
                reason: note.reason,
                note: Some(note.note),
                action: "Reconcile".into(),
                secondary: None,
            };
            let recorder = Recorder::new(self.client.clone(), self.reporter.clone());
            if let Err(e) = recorder.publish(&event, &object.object_ref(&())).await {
                warn!(error = %e, reason = %event.reason, "publishing an Event failed");
            }
        }
    }

    /// Forgets every object whose uid is not in `live` (uid to the resourceVersion the cache
    /// holds), and every status written that the cache caught up with: an object that is not
    /// reconciled again would otherwise be kept until its next change.
    pub fn retain(&self, live: &HashMap<&str, &str>) {
        crate::map_retain::retain(&mut lock(&self.objects), |uid, entry| {
            let Some(&seen) = live.get(uid.as_str()) else {
                return false;
            };
            if entry
                .written
                .as_ref()
                .is_some_and(|(rv, _)| rv.as_str() != seen)
            {
                entry.written = None;
            }
            entry.written.is_some() || Arc::strong_count(&entry.lock) > 1
        });
    }

    /// Forgets, as [`retain`](Self::retain) does, every object that is not among `cached`
    /// (every object of the kind its cache holds).
    pub fn retain_cached(&self, cached: &[Arc<DeserializeGuard<K>>]) {
        self.retain(&cached_versions(cached));
    }

    /// Sends `status` to `object`'s status subresource with server-side apply.
    async fn apply(&self, object: &K, status: &K::Status) -> Result<(), Error> {
        let kind = K::kind(&());
        let name = object.name_any();
        let ns = object
            .namespace()
            .ok_or(Error::Unnamed(<K as Reported>::KIND))?;
        let api: Api<K> = Api::namespaced(self.client.clone(), &ns);
        let body = serde_json::json!({
            "apiVersion": K::api_version(&()),
            "kind": kind,
            "status": status,
        });
        api.patch_status(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|e| Error::kube(format!("writing the status of {kind} {name}"), e))?;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod double;
#[cfg(test)]
mod tests;
