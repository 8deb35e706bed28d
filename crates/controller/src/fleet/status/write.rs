//! A fleet's status and Events, through the one [`Writer`]. A reconcile
//! [publishes](FleetWriter::publish) its [`Report`]; the [status
//! follower](crate::fleet::status::follower) asks it to [follow](FleetWriter::follow) a newer
//! StatefulSet. Either way it takes the fleet's lock, computes the status from the last
//! observation with the newest StatefulSet, and hands it to the writer, which writes it only
//! when it changed; the Events the change is worth go with it. Every failure a reconcile met
//! is counted once.

use crate::cache::caches;
use crate::cache::compact::Compact;
use crate::cache::owner_index::controller_uid;
use crate::error::Error;
use crate::fleet::status::compute;
use crate::fleet::status::conditions::progressing::Deadline;
use crate::fleet::status::events;
use crate::fleet::status::observation::Observed;
use crate::fleet::status::observation::{Observation, Observations, Report};
use crate::metrics::Metrics;
use crate::status::writer::{Update, Writer};
use crate::status::written::Written;
use celld_api::{CelldFleet, CelldFleetStatus, conditions};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::events::Reporter;
use kube::runtime::reflector::Store;
use kube::{Client, ResourceExt};
use std::collections::HashMap;
use std::sync::Arc;
use tracing::debug;

/// Writes fleets' statuses and Events through the one [`Writer`]; see the [module](self).
pub struct FleetWriter {
    writer: Writer<CelldFleet>,
    /// What the writer wrote that the cache may not show yet.
    written: Arc<Written<CelldFleet>>,
    metrics: Arc<Metrics>,
    /// The cached StatefulSets: a newer one than a reconcile applied is the one reported.
    statefulsets: Store<Compact<StatefulSet>>,
    /// What each fleet's last full reconcile observed.
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

impl FleetWriter {
    /// A writer sending through `client` (which counts and fences its requests), publishing
    /// Events as `reporter`, reading newer StatefulSets from `statefulsets`, recording what it
    /// wrote in `written`.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        reporter: Reporter,
        statefulsets: Store<Compact<StatefulSet>>,
        written: Arc<Written<CelldFleet>>,
    ) -> Self {
        Self {
            writer: Writer::new(client, metrics.clone(), reporter, written.clone()),
            written,
            metrics,
            statefulsets,
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
        self.writer
            .count(observation.failures.iter().map(|f| &f.reason));
        let uid = fleet.uid().unwrap_or_default();
        let lock = self.writer.lock(&uid);
        let _writing = lock.lock().await;
        // A fleet's first children are not worth an Event each: Ready says when it serves.
        if fleet.status.is_some() {
            self.writer
                .send(fleet, events::applied(&changed, &pruned))
                .await;
        }
        if let Some(warning) = observation
            .source
            .as_ref()
            .and_then(|s| s.drift_warning.clone())
        {
            self.metrics.source_drifted();
            self.writer
                .send(fleet, vec![events::drifted(warning)])
                .await;
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
                self.write(fleet, update, &observation, &observed).await?;
                (true, deadline)
            }
            None => (
                false,
                rollout_deadline(fleet, self.written.newest(fleet).as_ref()),
            ),
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
        let lock = self.writer.lock(&uid);
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

    /// Forgets the observation and the lock of every fleet whose uid is not in `live` (uid to
    /// the resourceVersion the cache holds).
    pub fn retain(&self, live: &HashMap<&str, &str>) {
        self.writer.retain(live);
        self.observations.retain(|uid| live.contains_key(uid));
    }

    /// The writer of every kind's status, for fleets.
    pub fn writer(&self) -> &Writer<CelldFleet> {
        &self.writer
    }

    /// The status `observed` gives `fleet`, when it differs from the newest one known.
    fn next(
        &self,
        fleet: &CelldFleet,
        observed: &Observed<'_>,
    ) -> Option<Update<CelldFleetStatus>> {
        self.writer.next(fleet, |previous| {
            compute::compute(previous, observed, Timestamp::now())
        })
    }

    /// Writes `update` to `fleet` and publishes the Events of its failures and transitions.
    async fn write(
        &self,
        fleet: &CelldFleet,
        update: Update<CelldFleetStatus>,
        observation: &Observation,
        observed: &Observed<'_>,
    ) -> Result<(), Error> {
        let notes = |previous: Option<&CelldFleetStatus>, status: &CelldFleetStatus| {
            let mut notes = events::failures(previous, &observed.failures);
            notes.extend(events::transitions(
                previous,
                status,
                &fleet.spec.image,
                observation.pointer(),
                &observed.failures,
            ));
            if let Some((note, direction, reason)) = events::scaled(previous, status) {
                self.metrics.scale_decided(direction, &reason);
                notes.push(note);
            }
            notes
        };
        self.writer.write(fleet, update, notes).await
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
