//! What a batch waits for after applying its cases: each admitted fleet, store and rollout, until
//! its status says what is going on.

use super::cases::Case;
use super::rollout_verdict::{rollout_ending, rollout_pending};
use super::snapshot::Snapshot;
use super::verdict::{Admission, ending, fleet_pending, store_pending};
use std::time::Duration;

/// An admitted object: its name and generation.
type Admitted = Option<(String, i64)>;

/// A case's admitted objects, waited for.
pub struct Pending {
    /// The case's place in its batch.
    pub case: usize,
    fleet: Admitted,
    store: Admitted,
    rollout: Admitted,
    /// How long after the apply every one of them said what is going on.
    pub done: Option<Duration>,
    /// Why the last look did not count yet.
    pub last: String,
    /// How the case ended (the rollout's phase and conditions, or the fleet's).
    pub ending: Option<String>,
}

fn admitted(name: Option<&str>, admission: Option<&Admission>) -> Admitted {
    match (name, admission) {
        (Some(name), Some(Admission::Admitted { generation })) => {
            Some((name.to_string(), *generation))
        }
        _ => None,
    }
}

impl Pending {
    /// What to wait for of case `case` (the `i`th of its batch), from what the API server
    /// answered to its manifest (`main`) and its companion; `None` when nothing was admitted.
    pub fn of(
        i: usize,
        case: &Case,
        main: &Admission,
        companion: Option<&Admission>,
    ) -> Option<Self> {
        let fleet_name = case.fleet().and_then(|f| f["metadata"]["name"].as_str());
        let (fleet, store, rollout) = match case.kind_label() {
            "CelldObjectStore" => (
                admitted(fleet_name, companion),
                admitted(Some(case.name()), Some(main)),
                None,
            ),
            "CelldRollout" => (
                admitted(fleet_name, companion),
                None,
                admitted(Some(case.name()), Some(main)),
            ),
            _ => (admitted(Some(case.name()), Some(main)), None, None),
        };
        (fleet.is_some() || store.is_some() || rollout.is_some()).then(|| Pending {
            case: i,
            fleet,
            store,
            rollout,
            done: None,
            last: "not looked at yet".into(),
            ending: None,
        })
    }

    /// Looks at the case's objects in `snap`, `elapsed` after the apply.
    pub fn check(&mut self, snap: &Snapshot, gateway_api: bool, elapsed: Duration) {
        let store = self
            .store
            .as_ref()
            .and_then(|(name, generation)| store_pending(snap.stores.get(name), *generation));
        let fleet = self.fleet.as_ref().and_then(|(name, generation)| {
            fleet_pending(
                snap.fleets.get(name),
                *generation,
                &snap.children,
                gateway_api,
            )
        });
        let rollout = self
            .rollout
            .as_ref()
            .and_then(|(name, generation)| rollout_pending(snap.rollouts.get(name), *generation));
        let waiting: Vec<String> = [store, fleet, rollout].into_iter().flatten().collect();
        if !waiting.is_empty() {
            self.last = waiting.join("; ");
            return;
        }
        self.done = Some(elapsed);
        self.ending = Some(match &self.rollout {
            Some((name, _)) => rollout_ending(snap.rollouts.get(name)),
            None => ending(
                self.fleet
                    .as_ref()
                    .and_then(|(name, _)| snap.fleets.get(name)),
            ),
        });
    }
}
