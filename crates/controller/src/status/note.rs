//! One Event to publish, as every controller decides it: its type, reason and words. The
//! [writer](crate::status) publishes it.

use kube::runtime::events::EventType;

/// One Event to publish on a fleet, a preview or a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// Normal or Warning.
    pub type_: EventType,
    /// The Event's reason.
    pub reason: String,
    /// What it says.
    pub note: String,
}

impl Note {
    /// An Event of `type_` with `reason`, saying `note`.
    pub fn new(type_: EventType, reason: impl Into<String>, note: impl Into<String>) -> Self {
        Self {
            type_,
            reason: reason.into(),
            note: note.into(),
        }
    }
}
