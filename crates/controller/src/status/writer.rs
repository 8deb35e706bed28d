//! The one writer of statuses and Events, for fleets, previews and stores alike (as linkerd's
//! policy controller patches every route kind through one `patch_status`). A controller
//! computes the status it wants; the writer compares it with the newest one known, writes it
//! with server-side apply only when it differs, records what it wrote in the
//! [written](crate::status::written) cache the reconciles read (so one that sees the object
//! before the informer caught up with the write starts from the written status, and never
//! replays a step), publishes the Events the change is worth, and counts every failure. Writes
//! of one object are serialized by its [lock](Writer::lock).

use crate::children::MANAGER;
use crate::error::Error;
use crate::locks::lock;
use crate::metrics::Metrics;
use crate::status::note::Note;
use crate::status::reported::Reported;
use crate::status::written::Written;
use celld_api::reasons::Reason;
use kube::api::{Patch, PatchParams};
use kube::runtime::events::{Event, Recorder, Reporter};
use kube::{Api, Client, ResourceExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::warn;

/// Writes the statuses and Events of objects of kind `K`; see the [module](self).
pub struct Writer<K: Reported> {
    client: Client,
    metrics: Arc<Metrics>,
    /// Who publishes the Events.
    reporter: Reporter,
    /// Where every status written is recorded, for the reconciles to read.
    written: Arc<Written<K>>,
    /// Per object uid: the lock of its status writes.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Per object uid: when this writer last wrote its status.
    wrote_at: Mutex<HashMap<String, Instant>>,
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
    /// Events as `reporter`, recording what it wrote in `written`.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        reporter: Reporter,
        written: Arc<Written<K>>,
    ) -> Self {
        Self {
            client,
            metrics,
            reporter,
            written,
            locks: Mutex::new(HashMap::new()),
            wrote_at: Mutex::new(HashMap::new()),
        }
    }

    /// The lock that serializes the status writes of the object `uid`.
    pub fn lock(&self, uid: &str) -> Arc<tokio::sync::Mutex<()>> {
        lock(&self.locks)
            .entry(uid.to_string())
            .or_default()
            .clone()
    }

    /// Counts `reasons`, the failures a reconcile met.
    pub fn count<'a>(&self, reasons: impl IntoIterator<Item = &'a Reason>) {
        for reason in reasons {
            self.metrics.failed(*reason);
        }
    }

    /// The status `compute` makes from the newest one known, when it differs from it.
    pub fn next(
        &self,
        object: &K,
        compute: impl FnOnce(Option<&K::Status>) -> K::Status,
    ) -> Option<Update<K::Status>> {
        let previous = self.written.newest(object);
        let status = compute(previous.as_ref());
        (previous.as_ref() != Some(&status)).then_some(Update { previous, status })
    }

    /// Writes `update` to `object` with server-side apply, records it, then publishes the
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
        lock(&self.wrote_at).insert(object.uid().unwrap_or_default(), Instant::now());
        let notes = notes(update.previous.as_ref(), &update.status);
        self.written.record(object, update.status);
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
        let latest = self.written.newest(object);
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

    /// How long ago this writer last wrote `object`'s status, if it did since it started.
    pub fn since_write(&self, object: &K) -> Option<Duration> {
        let uid = object.uid()?;
        lock(&self.wrote_at).get(&uid).map(Instant::elapsed)
    }

    /// Forgets the lock of every object whose uid is not in `live` and that no write holds, and
    /// when the others were written.
    pub fn retain(&self, live: &HashMap<&str, &str>) {
        crate::map_retain::retain(&mut lock(&self.locks), |uid, lock| {
            live.contains_key(uid.as_str()) || Arc::strong_count(lock) > 1
        });
        crate::map_retain::retain(&mut lock(&self.wrote_at), |uid, _| {
            live.contains_key(uid.as_str())
        });
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
