//! Who a fleet is, as every step of its reconcile names it.

use celld_api::CelldFleet;
use kube::ResourceExt;

/// Who a fleet is: the names every step uses.
#[derive(Debug, Clone)]
pub struct FleetId {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its uid: the owner of its children and the key of what the operator keeps per fleet.
    pub uid: String,
}

impl FleetId {
    /// The id of `fleet`; None for an object without namespace or uid (the API server never
    /// sends one).
    pub fn of(fleet: &CelldFleet) -> Option<Self> {
        Some(Self {
            namespace: fleet.namespace()?,
            name: fleet.name_any(),
            uid: fleet.uid()?,
        })
    }
}
