//! What the floor of one fleet count measured.

use crate::audit::{ByResource, ServerLoad, Tally};
use crate::measure::cpu_meter::CpuUse;
use crate::measure::status_lag::StatusLag;
use std::time::Duration;

/// The floor for one fleet count: the fleets created and the same children applied with no operator,
/// and a status written per fleet once its children are and once its StatefulSet is ready.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorRun {
    /// Fleets whose children were applied.
    pub fleets: usize,
    /// The fake nodes of its control plane.
    pub nodes: usize,
    /// Objects applied (every child of every fleet).
    pub objects: usize,
    /// From the first create until every StatefulSet was ready.
    pub statefulsets_ready: Duration,
    /// From the first create until every fleet's status said Ready=True: the floor's converge.
    pub fleets_ready: Duration,
    /// Its status lag, measured as the operator's: over the fleets without spec.source, the
    /// delay from its StatefulSet being ready to its Ready=True.
    pub status_lag: StatusLag,
    /// Its requests from the first create until then.
    pub requests: Tally,
    /// The same by resource and verb.
    pub by_resource: ByResource,
    /// What the API server handled over the same time, from everyone.
    pub server: ServerLoad,
    /// Everyone's writes over the same time (the control plane's too), by resource and verb.
    pub server_writes: ByResource,
    /// Where the CPU went over the same time.
    pub cpu: CpuUse,
    /// kwok's stage plays the API server refused over the same time.
    pub kwok_refused: u64,
}
