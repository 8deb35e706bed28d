//! What the store controller keeps beside the [shared](crate::shared::context) state: the
//! writer of the stores' statuses and Events.

use crate::shared::context::Shared;
use crate::shared::retry::Controlled;
use crate::status::writer::Writer;
use celld_api::CelldObjectStore;
use std::sync::Arc;

/// The store controller's state.
pub struct Context {
    /// What every controller shares.
    pub shared: Arc<Shared>,
    /// The writer of the stores' statuses and Events.
    pub status: Writer<CelldObjectStore>,
}

impl Context {
    /// The store controller's state over `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        Self {
            status: Writer::new(
                shared.client.clone(),
                shared.metrics.clone(),
                shared.reporter(),
            ),
            shared,
        }
    }
}

impl Controlled for Context {
    fn shared(&self) -> &Shared {
        &self.shared
    }
}
