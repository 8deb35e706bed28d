//! What every controller shares, below all three: the operator's [`settings`], the shared
//! [`context`] (client, metrics, caches, credentials, bucket clients), the retry
//! [`backoff`] and the start and end of every reconcile ([`retry`]), and the resync spread over
//! a grid ([`resync_grid`]) and stretched to a rate when the fleets are many
//! ([`resync_budget`]).

pub mod backoff;
pub mod bucket_access;
pub mod context;
pub mod own_identity;
pub mod resync_budget;
pub mod resync_grid;
pub mod retry;
pub mod settings;
