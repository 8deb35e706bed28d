//! CelldPreviews: each gets a fleet of its own, a copy of the fleet it previews, served at
//! `<preview>.<baseDomain>` with its data under its own bucket prefix, and retired (nodes
//! stopped, prefix emptied, fleet deleted) at its TTL or when it is deleted.

pub mod child;
pub mod claim;
pub mod context;
pub mod finalizer;
pub mod lifetime;
pub mod reconcile;
pub mod retire;
pub mod status;
