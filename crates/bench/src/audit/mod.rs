//! The kube-apiserver audit log (JSON lines, metadata level), followed while a run goes on:
//! which requests one user made (the operator, or the floor as the operator's ServiceAccount),
//! and what the API server handled from everyone.

mod event;
mod percentiles;
mod server;
mod tail;
mod user;

pub use percentiles::Percentiles;
pub use server::ServerLoad;
pub use tail::AuditTail;
pub use user::{ByResource, StatusWrite, StatusWrites, Tally};
