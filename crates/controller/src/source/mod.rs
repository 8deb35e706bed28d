//! A fleet's declared Worker source (spec.source), decided without the API server: the
//! revision it names ([`wanted`]), what its deploy Job says ([`job_state`]), and the pure
//! [`decide`] step that turns those (in the [`terms`] it is decided in), the bucket's pointer and the fleet's last
//! status.source into the next status.source, the Job to start, the Jobs to keep and the
//! SourceSynced condition. The Job itself is built by
//! [`children::source_job`](crate::children::source_job); the fleet pipeline starts and deletes
//! Jobs and reads the caches.

pub mod decide;
mod drift;
pub mod job_state;
mod publish_step;
pub mod terms;
pub mod wanted;
