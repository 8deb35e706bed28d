//! The one writer of every fleet's status and Events. A reconcile [publishes](Writer::publish)
//! its [`Report`]; the [status follower](crate::fleet::status::follower) asks it to
//! [follow](Writer::follow) a newer StatefulSet. Either way the writer takes the fleet's lock,
//! computes the status from the last observation with the newest StatefulSet, writes it with
//! server-side apply only when it changed, and publishes the Events the change is worth. It
//! remembers what it wrote, so a reconcile that sees the fleet before the cache caught up with
//! the write starts from the written status, and it counts every failure a reconcile met, once.

use crate::cache::caches;
use crate::cache::compact::Compact;
use crate::cache::owner_index::controller_uid;
use crate::children::MANAGER;
use crate::error::Error;
use crate::fleet::status::compute;
use crate::fleet::status::conditions::progressing::Deadline;
use crate::fleet::status::events;
use crate::fleet::status::observation::Observed;
use crate::fleet::status::observation::{Observation, Observations, Report};
use crate::metrics::Metrics;
use crate::status::note::Note;
use celld_api::{CelldFleet, CelldFleetStatus, conditions};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::events::{Event, Recorder, Reporter};
use kube::runtime::reflector::Store;
use kube::{Api, Client, Resource, ResourceExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tracing::{debug, warn};

/// Writes fleets' statuses and Events; see the [module](self).
pub struct Writer {
    client: Client,
    metrics: Arc<Metrics>,
    /// Who publishes the Events.
    reporter: Reporter,
    /// The cached StatefulSets: a newer one than a reconcile applied is the one reported.
    statefulsets: Store<Compact<StatefulSet>>,
    /// The status last written per fleet uid, with the resourceVersion of the fleet it was
    /// computed from: a reconcile that sees that same version again (the cache has not caught
    /// up with the write yet) starts from what was written, not from the stale status.
    written: Mutex<HashMap<String, (String, CelldFleetStatus)>>,
    /// What each fleet's last full reconcile observed, and the lock of its status writes.
    observations: Observations,
}

/// What publishing a reconcile's report did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// Whether the status was written.
    pub wrote: bool,
    /// When the rollout the status shows under way (Progressing=True) passes
    /// spec.progressDeadlineSeconds; None when none is under way.
    pub deadline: Option<Timestamp>,
}

/// A status that differs from the last one written or read.
struct Update {
    previous: Option<CelldFleetStatus>,
    status: CelldFleetStatus,
}

impl Writer {
    /// A writer sending through `client` (which counts and fences its requests), publishing
    /// Events as `reporter`, reading newer StatefulSets from `statefulsets`.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        reporter: Reporter,
        statefulsets: Store<Compact<StatefulSet>>,
    ) -> Self {
        Self {
            client,
            metrics,
            reporter,
            statefulsets,
            written: Mutex::new(HashMap::new()),
            observations: Observations::default(),
        }
    }

    /// Publishes what one reconcile of `fleet` saw and did: counts its failures, writes the
    /// status when it changed, publishes the Events, and keeps the observation for the
    /// follower. Returns whether it wrote the status, and the deadline of a rollout under way.
    pub async fn publish(&self, fleet: &CelldFleet, report: Report) -> Result<Published, Error> {
        let Report {
            observation,
            statefulset,
            changed,
            pruned,
        } = report;
        for failure in &observation.failures {
            self.metrics.failed(failure.reason);
        }
        let uid = fleet.uid().unwrap_or_default();
        let lock = self.observations.lock(&uid);
        let _writing = lock.lock().await;
        // A fleet's first children are not worth an Event each: Ready says when it serves.
        if fleet.status.is_some() {
            self.send(fleet, events::applied(&changed, &pruned)).await;
        }
        if let Some(warning) = observation
            .source
            .as_ref()
            .and_then(|s| s.drift_warning.clone())
        {
            self.metrics.source_drifted();
            self.send(fleet, vec![events::drifted(warning)]).await;
        }
        let name = fleet.name_any();
        let newer = caches::newer(
            &self.statefulsets,
            &fleet.namespace().unwrap_or_default(),
            &name,
            statefulset.as_ref(),
        );
        let observed = observation.observed(&name, newer.as_ref().or(statefulset.as_ref()));
        let (wrote, deadline) = match self.next(fleet, &observed) {
            Some(update) => {
                let deadline = rollout_deadline(fleet, Some(&update.status));
                let written = self.write(fleet, update, &observation, &observed).await;
                if let Err(e) = &written {
                    self.metrics.failed(e.reason());
                }
                written?;
                (true, deadline)
            }
            None => {
                let seen = fleet.resource_version().unwrap_or_default();
                let current = self
                    .written_status(&uid, &seen)
                    .or_else(|| fleet.status.clone());
                (false, rollout_deadline(fleet, current.as_ref()))
            }
        };
        self.observations.record(&uid, Arc::new(observation));
        Ok(Published { wrote, deadline })
    }

    /// Follows `statefulset` of `fleet` between reconciles: writes the status again from the
    /// last observation when the Ready condition changes with it. Anything else (a changed
    /// fleet, progress that does not change Ready) waits for the next reconcile.
    pub async fn follow(&self, fleet: &CelldFleet, statefulset: StatefulSet) {
        let uid = fleet.uid().unwrap_or_default();
        if controller_uid(&statefulset) != Some(uid.as_str()) {
            return;
        }
        let lock = self.observations.lock(&uid);
        let _writing = lock.lock().await;
        let Some(observation) = self.observations.current(&uid, fleet.metadata.generation) else {
            // The fleet changed since its last full reconcile: that reconcile is queued.
            return;
        };
        let name = fleet.name_any();
        let observed = observation.observed(&name, Some(&statefulset));
        let Some(update) = self.next(fleet, &observed) else {
            return;
        };
        if ready(update.previous.as_ref()) == ready(Some(&update.status)) {
            return;
        }
        match self.write(fleet, update, &observation, &observed).await {
            Ok(()) => self.metrics.followed(),
            Err(e) => {
                debug!(fleet = %name, error = %e, "the status follower could not write; the reconcile will")
            }
        }
    }

    /// Forgets every fleet whose uid is not in `live` (uid to the resourceVersion the cache
    /// holds), and every status written that the cache caught up with: a settled fleet's
    /// resync does not publish, so it would otherwise be kept until its next change.
    pub fn retain(&self, live: &HashMap<&str, &str>) {
        crate::map_retain::retain(
            &mut self.written.lock().unwrap_or_else(|e| e.into_inner()),
            |uid, (seen, _)| live.get(uid.as_str()) == Some(&seen.as_str()),
        );
        self.observations.retain(|uid| live.contains_key(uid));
    }

    /// The status `observed` gives `fleet`, when it differs from the one last written for it
    /// (or, when the fleet seen is newer than that write, from the fleet's own status).
    fn next(&self, fleet: &CelldFleet, observed: &Observed<'_>) -> Option<Update> {
        let uid = fleet.uid().unwrap_or_default();
        let seen = fleet.resource_version().unwrap_or_default();
        let previous = self
            .written_status(&uid, &seen)
            .or_else(|| fleet.status.clone());
        let status = compute::compute(previous.as_ref(), observed, Timestamp::now());
        (previous.as_ref() != Some(&status)).then_some(Update { previous, status })
    }

    /// The newest status of `fleet` this writer knows: the one it wrote when the fleet was at
    /// the resourceVersion seen now (the cache has not caught up with that write), else the
    /// fleet's own. A step that builds on its last status (the publishing of spec.source) reads
    /// it here, so a stale cache never replays a step already taken.
    pub fn latest(&self, fleet: &CelldFleet) -> Option<CelldFleetStatus> {
        let uid = fleet.uid().unwrap_or_default();
        let seen = fleet.resource_version().unwrap_or_default();
        self.written_status(&uid, &seen)
            .or_else(|| fleet.status.clone())
    }

    /// The status written for fleet `uid` when it was at `resource_version`, if that is the
    /// version seen now. A status written at another version is forgotten: the fleet seen is
    /// newer (the cache caught up with the write), so its own status is the one to start from.
    fn written_status(&self, uid: &str, resource_version: &str) -> Option<CelldFleetStatus> {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        match written.get(uid) {
            Some((rv, status)) if rv == resource_version => Some(status.clone()),
            Some(_) => {
                written.remove(uid);
                None
            }
            None => None,
        }
    }

    /// Writes `update` to `fleet` and publishes the Events of its failures and transitions.
    async fn write(
        &self,
        fleet: &CelldFleet,
        update: Update,
        observation: &Observation,
        observed: &Observed<'_>,
    ) -> Result<(), Error> {
        let ns = fleet.namespace().ok_or(Error::Unnamed("CelldFleet"))?;
        let api: Api<CelldFleet> = Api::namespaced(self.client.clone(), &ns);
        let body = serde_json::json!({
            "apiVersion": CelldFleet::api_version(&()),
            "kind": CelldFleet::kind(&()),
            "status": update.status,
        });
        api.patch_status(
            &fleet.name_any(),
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(|e| {
            Error::kube(
                format!("writing the status of CelldFleet {}", fleet.name_any()),
                e,
            )
        })?;
        let uid = fleet.uid().unwrap_or_default();
        let seen = fleet.resource_version().unwrap_or_default();
        let previous = update.previous.as_ref();
        let mut notes = events::failures(previous, observed.failures);
        notes.extend(events::transitions(
            previous,
            &update.status,
            &fleet.spec.image,
            observation.pointer(),
            observed.failures,
        ));
        if let Some((note, direction, reason)) = events::scaled(previous, &update.status) {
            self.metrics.scale_decided(direction, &reason);
            notes.push(note);
        }
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uid, (seen, update.status));
        self.send(fleet, notes).await;
        Ok(())
    }

    /// Publishes `notes` on `fleet`. A recorder per Event: kube's Recorder keeps every Event
    /// it published for six minutes, to count repeats as a series; this writer publishes an
    /// Event once per change, so a recorder per Event keeps none of them in memory.
    async fn send(&self, fleet: &CelldFleet, notes: Vec<Note>) {
        for note in notes {
            let event = Event {
                type_: note.type_,
                reason: note.reason,
                note: Some(note.note),
                action: "Reconcile".into(),
                secondary: None,
            };
            let recorder = Recorder::new(self.client.clone(), self.reporter.clone());
            if let Err(e) = recorder.publish(&event, &fleet.object_ref(&())).await {
                warn!(error = %e, reason = %event.reason, "publishing an Event failed");
            }
        }
    }
}

/// When the rollout `status` shows under way passes the fleet's deadline.
fn rollout_deadline(fleet: &CelldFleet, status: Option<&CelldFleetStatus>) -> Option<Timestamp> {
    Deadline::new(
        fleet.spec.progress_deadline_seconds.into(),
        status,
        fleet.metadata.generation,
        Timestamp::now(),
    )
    .under_way()
}

/// The Ready condition's status in a fleet status.
fn ready(status: Option<&CelldFleetStatus>) -> Option<&str> {
    status
        .and_then(|s| conditions::find(&s.conditions, conditions::READY))
        .map(|c| c.status.as_str())
}

#[cfg(test)]
mod tests;
