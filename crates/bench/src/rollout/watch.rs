//! Watches the rollout and records when each wave was first seen in each phase and when the
//! rollout was first seen in each of its own, every status it went through (how many, and how
//! large), and the last one.

use celld_api::CelldFleet;
use celld_api::conditions::{ADOPTED, READY, find};
use celld_api::rollout::{CelldRollout, CelldRolloutStatus};
use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher;
use kube::{Api, Client};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::task::JoinHandle;

/// What the watch has seen of the rollout.
#[derive(Debug, Clone, Default)]
pub struct RolloutSeen {
    /// When each wave was first seen in each phase, by wave number and phase.
    pub waves: BTreeMap<(i32, &'static str), Instant>,
    /// When the rollout was first seen in each phase.
    pub phases: HashMap<&'static str, Instant>,
    /// Statuses seen (each a write of the operator's that the watch saw).
    pub statuses: u64,
    /// Their size as JSON, summed, bytes.
    pub status_bytes: u64,
    /// The largest of them, bytes.
    pub largest_status: u64,
    /// The last status seen.
    pub last: Option<CelldRolloutStatus>,
}

impl RolloutSeen {
    /// When wave `number` was first seen in `phase`.
    pub fn wave(&self, number: i32, phase: &str) -> Option<Instant> {
        self.waves
            .iter()
            .find(|((n, p), _)| *n == number && *p == phase)
            .map(|(_, t)| *t)
    }

    /// The names of the fleets of wave `number`, as the last status lists them.
    pub fn wave_fleets(&self, number: i32) -> Vec<String> {
        self.last
            .iter()
            .flat_map(|s| &s.waves)
            .filter(|w| w.number == number)
            .flat_map(|w| &w.fleets)
            .map(|f| f.name.clone())
            .collect()
    }

    /// Records `status`, seen at `now`.
    fn record(&mut self, status: &CelldRolloutStatus, now: Instant) {
        if self.last.as_ref() == Some(status) {
            return;
        }
        let bytes = serde_json::to_vec(status).map_or(0, |b| b.len() as u64);
        self.statuses += 1;
        self.status_bytes += bytes;
        self.largest_status = self.largest_status.max(bytes);
        self.phases.entry(status.phase.as_str()).or_insert(now);
        for wave in &status.waves {
            self.waves
                .entry((wave.number, wave.phase.as_str()))
                .or_insert(now);
        }
        self.last = Some(status.clone());
    }
}

type Shared = Arc<Mutex<RolloutSeen>>;

/// The watch of the rollouts of one namespace (the bench makes one); stopped when dropped.
pub struct RolloutWatch {
    seen: Shared,
    task: JoinHandle<()>,
}

impl RolloutWatch {
    /// Starts watching the rollouts of `namespace`.
    pub fn start(client: &Client, namespace: &str) -> Self {
        let seen = Shared::default();
        let shared = seen.clone();
        let api: Api<CelldRollout> = Api::namespaced(client.clone(), namespace);
        let task = tokio::spawn(async move {
            let mut changes = watcher(api, watcher::Config::default())
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(rollout) = changes.next().await {
                let now = Instant::now();
                if let Ok(CelldRollout {
                    status: Some(status),
                    ..
                }) = rollout
                {
                    shared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .record(&status, now);
                }
            }
        });
        RolloutWatch { seen, task }
    }

    /// What it has seen so far.
    pub fn seen(&self) -> RolloutSeen {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for RolloutWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether a fleet serves the rollout's version ([`V2`](super::workload::V2)): its status'
/// deployment names it, and it is Adopted (every node serves it) and Ready: what the rollout's
/// gate waits for.
pub fn serves_revision(f: &CelldFleet) -> bool {
    let Some(status) = &f.status else {
        return false;
    };
    let holds = |type_: &str| find(&status.conditions, type_).is_some_and(|c| c.status == "True");
    status.deployment.as_ref().map(|d| d.version.as_str()) == Some(super::workload::V2)
        && holds(ADOPTED)
        && holds(READY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(waves: serde_json::Value, phase: &str) -> CelldRolloutStatus {
        serde_json::from_value(json!({"phase": phase, "waves": waves})).unwrap()
    }

    #[test]
    fn each_wave_phase_is_timed_once_and_each_status_counted_once() {
        let mut seen = RolloutSeen::default();
        let t = Instant::now();
        let first = status(
            json!([{"number": 1, "phase": "Publishing", "fleets": [{"name": "t0000"}]}, {"number": 2}]),
            "Progressing",
        );
        seen.record(&first, t);
        seen.record(&first, t + std::time::Duration::from_secs(1));
        let later = status(
            json!([{"number": 1, "phase": "Passed", "fleets": [{"name": "t0000"}]}, {"number": 2, "phase": "Publishing"}]),
            "Progressing",
        );
        seen.record(&later, t + std::time::Duration::from_secs(2));
        assert_eq!(seen.statuses, 2);
        assert_eq!(seen.wave(1, "Publishing"), Some(t));
        assert_eq!(seen.wave(2, "Pending"), Some(t));
        assert_eq!(
            seen.wave(2, "Publishing"),
            Some(t + std::time::Duration::from_secs(2))
        );
        assert_eq!(seen.wave_fleets(1), ["t0000"]);
        assert_eq!(seen.phases.get("Progressing"), Some(&t));
        assert!(seen.largest_status > 0 && seen.status_bytes > seen.largest_status);
    }

    #[test]
    fn a_fleet_serves_the_revision_once_every_node_adopted_it_and_it_is_ready() {
        let fleet = |version: &str, adopted: &str| -> CelldFleet {
            serde_json::from_value(json!({
                "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
                "metadata": {"name": "t0001"},
                "spec": {"replicas": 2, "objectStorage": {"bucket": "s3://b/x"}},
                "status": {
                    "deployment": {"version": version},
                    "conditions": [
                        {"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                        {"type": "Adopted", "status": adopted, "reason": "Adopted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                    ],
                },
            }))
            .unwrap()
        };
        assert!(serves_revision(&fleet(super::super::workload::V2, "True")));
        assert!(!serves_revision(&fleet(
            super::super::workload::V2,
            "False"
        )));
        assert!(!serves_revision(&fleet(super::super::workload::V1, "True")));
    }
}
