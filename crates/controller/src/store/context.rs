//! What the store controller keeps beside the [shared](crate::shared::context) state: the
//! writer of the stores' statuses and Events.

use crate::shared::context::WithWriter;
use celld_api::CelldObjectStore;

/// The store controller's state.
pub type Context = WithWriter<CelldObjectStore>;
