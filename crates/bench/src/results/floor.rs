//! What the floor of one fleet count measured.

use crate::audit::{ByResource, ServerLoad, Tally};
use std::time::Duration;

/// The floor for one fleet count: the same children, pre-rendered, applied with no operator,
/// and one status written per fleet once its StatefulSet is ready.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorRun {
    /// Fleets whose children were applied.
    pub fleets: usize,
    /// The fake nodes of its control plane.
    pub nodes: usize,
    /// Objects applied (every child of every fleet).
    pub objects: usize,
    /// From the first apply until every StatefulSet was ready.
    pub statefulsets_ready: Duration,
    /// From the first apply until every fleet's status said Ready=True: the floor's converge.
    pub fleets_ready: Duration,
    /// Its requests from the first apply until then.
    pub requests: Tally,
    /// The same by resource and verb.
    pub by_resource: ByResource,
    /// What the API server handled over the same time, from everyone.
    pub server: ServerLoad,
}
