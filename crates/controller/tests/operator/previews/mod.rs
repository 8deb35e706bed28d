//! CelldPreviews on the local control plane with the node double: a preview gets a fleet of
//! its own (its prefix under the previews bucket, its host, owned by the preview), serves a
//! version, and at its TTL loses its fleet and the objects under its prefix while a neighbour
//! prefix (`pr-12` beside `pr-1`) and the previewed fleet's own prefix survive. Admission
//! refuses a preview of a fleet that does not allow previews, a TTL above the fleet's maximum
//! and a name another fleet has; a deleted preview takes its fleet and data with it; an
//! operator replaced during an expiry finishes it once. The prefix emptied is the one claimed
//! (with a marker) when the preview's fleet was made.

mod admission;
mod deletion;
mod erasure;
mod expiry;
mod harness;

pub(crate) use harness::{Setup, V1, create, preview, previews_api, wait_gone, wait_phase};
