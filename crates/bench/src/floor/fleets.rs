//! The floor's status of each fleet, its Ready one: due once the fleet's StatefulSet is ready and
//! every child of the fleet was applied (no correct operator says a fleet serves before its
//! Service and Ingress exist), exactly once.

use super::reads::FloorReads;
use super::status::ready_status;
use crate::error::{Error, Result};
use crate::plane::identity::FIELD_MANAGER;
use celld_api::CelldFleet;
use celld_operator::buckets::pointer::Pointer;
use celld_operator::fleet::status::observation::Observation;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// What the floor's statuses need of one fleet.
#[derive(Debug, Default)]
struct FleetState {
    /// Its namespace.
    namespace: String,
    /// What its Ready status is computed from.
    status: Option<Observation>,
    /// What its Ready status still waits for.
    due: Mutex<Due>,
}

/// What a fleet's Ready status waits for: its children applied and its StatefulSet ready.
#[derive(Debug, Default)]
struct Due {
    /// Its children not applied yet.
    children_left: usize,
    /// Whether a watch saw its StatefulSet ready.
    statefulset_ready: bool,
}

impl Due {
    /// Whether the Ready status is due now.
    fn now(&self) -> bool {
        self.children_left == 0 && self.statefulset_ready
    }
}

/// The fleets created so far, by name, for their statuses; and how many statuses were written.
#[derive(Debug, Default)]
pub struct Fleets {
    fleets: Mutex<HashMap<String, Arc<FleetState>>>,
    written: AtomicUsize,
}

impl Fleets {
    /// Records `fleet` as created, with `children` to apply and its Ready status computed
    /// from `status`.
    pub fn created(&self, fleet: &CelldFleet, children: usize, status: Observation) {
        let state = FleetState {
            namespace: fleet.namespace().unwrap_or_default(),
            status: Some(status),
            due: Mutex::new(Due {
                children_left: children,
                statefulset_ready: false,
            }),
        };
        self.fleets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(fleet.name_any(), Arc::new(state));
    }

    /// How many statuses were written.
    pub fn statuses_written(&self) -> usize {
        self.written.load(Ordering::Relaxed)
    }

    fn state(&self, name: &str) -> Arc<FleetState> {
        self.fleets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
            .unwrap_or_default()
    }

    /// Records that a child of fleet `name` was applied; true when that makes its Ready
    /// status due (it was the last, and the StatefulSet was seen ready before).
    pub fn child_applied(&self, name: &str) -> bool {
        self.became_due(name, |due| {
            due.children_left = due.children_left.saturating_sub(1)
        })
    }

    /// Records that a watch saw the StatefulSet of fleet `name` ready; true when that makes
    /// its Ready status due (its children were all applied before).
    pub fn statefulset_ready(&self, name: &str) -> bool {
        self.became_due(name, |due| due.statefulset_ready = true)
    }

    /// Applies `change` to what fleet `name`'s Ready status waits for; true when that made
    /// it due (exactly once for each fleet).
    fn became_due(&self, name: &str, change: impl FnOnce(&mut Due)) -> bool {
        let state = self.state(name);
        let mut due = state.due.lock().unwrap_or_else(PoisonError::into_inner);
        let before = due.now();
        change(&mut due);
        !before && due.now()
    }

    /// Writes fleet `name`'s Ready status through `client`, its nodes' states read through
    /// `reads` first.
    pub async fn write(&self, client: &Client, reads: &FloorReads, name: &str) -> Result<()> {
        let state = self.state(name);
        let status = state.status.as_ref().ok_or_else(|| Error::Manifest {
            what: format!("the status of fleet {name}"),
            detail: "the floor did not create it".into(),
        })?;
        let Some(Pointer::Deployed(deployed)) = status.pointer() else {
            return Err(Error::FloorRead {
                what: format!("the deployment of fleet {name}"),
                detail: "its pointer was not read as one".into(),
            });
        };
        let nodes = reads
            .nodes(&state.namespace, name, &deployed.version)
            .await?;
        let api: Api<CelldFleet> = Api::namespaced(client.clone(), &state.namespace);
        api.patch_status(
            name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&ready_status(name, status, nodes, Timestamp::now())),
        )
        .await
        .map_err(Error::kube(format!("writing the status of fleet {name}")))?;
        self.written.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bench fleet `i`, created, and what its status is computed from.
    fn fleet(i: usize) -> (CelldFleet, Observation) {
        let mut fleet = crate::workload::fleet_manifest(i, &crate::workload::tests::s3()).unwrap();
        fleet.metadata.generation = Some(1);
        let pointer = crate::floor::children::tests::published(&fleet.name_any());
        let status = crate::floor::children::render(&fleet, &Default::default(), pointer)
            .unwrap()
            .status;
        (fleet, status)
    }

    #[test]
    fn a_ready_status_is_due_once_the_statefulset_is_ready_and_every_child_applied() {
        let fleets = Fleets::default();
        let [(a, a_status), (b, b_status)] = [fleet(1), fleet(2)];
        fleets.created(&a, 2, a_status);
        fleets.created(&b, 2, b_status);
        // f1: its StatefulSet is ready before its last child is applied.
        assert!(!fleets.child_applied("f1"));
        assert!(!fleets.statefulset_ready("f1"), "a child is left");
        assert!(fleets.child_applied("f1"), "the last child makes it due");
        // f2: every child is applied before its StatefulSet is ready.
        assert!(!fleets.child_applied("f2"));
        assert!(!fleets.child_applied("f2"), "its StatefulSet is not ready");
        assert!(fleets.statefulset_ready("f2"));
        // Due once: a watch seeing the StatefulSet ready again changes nothing.
        assert!(!fleets.statefulset_ready("f1"));
        assert!(!fleets.statefulset_ready("f2"));
    }
}
