//! The CelldRollout controller, and what the fleet controller looks at when a rollout changes.

use super::watched::{Fleets, Rollouts, refs};
use celld_api::{CelldFleet, CelldRollout};
use kube::ResourceExt;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{Controller, controller};
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

/// The rollouts of namespace `ns`, by name.
fn rollouts_in(rollouts: &Rollouts, ns: &str) -> Vec<String> {
    rollouts
        .state()
        .iter()
        .filter(|r| r.namespace().as_deref() == Some(ns))
        .map(|r| r.name_any())
        .collect()
}

/// The CelldRollout controller: rollouts, looked at again when a fleet of their namespace
/// changes (its labels, or the status they judge it by).
pub(super) fn rollout_controller(
    rollouts: &Rollouts,
    changes: crate::cache::streams::Items<DeserializeGuard<CelldRollout>>,
    fleet_changes: crate::cache::streams::Items<DeserializeGuard<CelldFleet>>,
    concurrency: u16,
) -> Controller<DeserializeGuard<CelldRollout>> {
    let by_fleet = rollouts.clone();
    Controller::for_stream(changes, rollouts.clone())
        .with_config(controller::Config::default().concurrency(concurrency))
        .watches_stream(fleet_changes, move |fleet: DeserializeGuard<CelldFleet>| {
            let ns = fleet.namespace().unwrap_or_default();
            refs(rollouts_in(&by_fleet, &ns), &ns)
        })
}

/// What a rollout hands its fleets: the key of its revision and the fleets following it.
type Handed = (Option<String>, BTreeSet<String>);

/// The fleets whose source a rollout's change changes: those that start or stop following it,
/// and all of them when its revision changes or it is deleted. The fleet controller looks at
/// them again; the others need nothing.
pub(super) struct HandedOver {
    fleets: Fleets,
    rollouts: Rollouts,
    last: Mutex<HashMap<String, Handed>>,
}

impl HandedOver {
    pub(super) fn new(fleets: Fleets, rollouts: Rollouts) -> Self {
        Self {
            fleets,
            rollouts,
            last: Mutex::new(HashMap::new()),
        }
    }

    /// The fleets to look at after `rollout` changed.
    pub(super) fn fleets(
        &self,
        rollout: &DeserializeGuard<CelldRollout>,
    ) -> Vec<ObjectRef<DeserializeGuard<CelldFleet>>> {
        let Ok(parsed) = &rollout.0 else {
            return Vec::new();
        };
        let ns = parsed.namespace().unwrap_or_default();
        let uid = parsed.uid().unwrap_or_default();
        let gone = self
            .rollouts
            .get(&ObjectRef::new(&parsed.name_any()).within(&ns))
            .is_none_or(|cached| cached.uid() != parsed.uid());
        let status = parsed.status.as_ref();
        let key = status
            .and_then(|s| s.target.as_ref())
            .map(|t| t.key.clone());
        let following: BTreeSet<String> = status
            .into_iter()
            .flat_map(|s| &s.waves)
            .flat_map(|w| &w.fleets)
            .filter(|f| f.phase.follows())
            .map(|f| f.name.clone())
            .collect();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let before = if gone {
            last.remove(&uid)
        } else {
            last.insert(uid, (key.clone(), following.clone()))
        };
        let (before_key, before_set) = before.unwrap_or_default();
        let changed: BTreeSet<String> = if gone || before_key != key {
            following.union(&before_set).cloned().collect()
        } else {
            following
                .symmetric_difference(&before_set)
                .cloned()
                .collect()
        };
        let known = |name: &String| self.fleets.get(&ObjectRef::new(name).within(&ns)).is_some();
        refs(changed.into_iter().filter(known).collect(), &ns)
    }
}
