//! The deploy pod: a short-lived restricted Job in the fleet's namespace that the commands drive
//! over `pods/exec`. Its build, waiting for it to run, checking its tools and an image's Worker
//! source for links out of it, and from inside it the reload of the fleet's nodes and which of
//! them refused the new version.

pub mod job;
pub mod pod_wait;
pub mod preflight;
pub mod refused;
pub mod reload;
pub mod source_links;
pub mod vars_volume;
pub mod work_pod;
