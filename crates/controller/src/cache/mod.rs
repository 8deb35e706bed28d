//! The watches ([`streams`], of the namespaces in [`watch_scope`], their items handed to the
//! controllers by [`forwarding`]) and the caches a reconcile reads instead of the API server
//! ([`caches`]), kept compact, indexed by owner, and given back to the system as fleets go.

pub mod cache_writer;
pub mod caches;
pub mod changes;
pub mod client;
pub mod compact;
pub mod discovery;
pub mod forwarding;
pub mod health;
pub mod heap_release;
pub mod owner_index;
pub mod packed_text;
pub mod source_caches;
pub mod streams;
pub mod watch_scope;
pub mod worth;
