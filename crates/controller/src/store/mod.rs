//! The CelldObjectStore controller: a store's status says whether its Secret holds what its
//! bucket needs and which fleets use it.

pub mod context;
pub mod status;
