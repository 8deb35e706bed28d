//! A Worker's `vars` from Kubernetes Secrets: the keys of each Secret become entries of the
//! `vars` object of the project's wrangler config (`wrangler.jsonc`, else `wrangler.json`), in
//! the deploy pod, just before `celld deploy` reads it. celld v0.6.0 and later refuse
//! `CELLD_VAR_*` and `CELLD_VARS_FILE` on the nodes, so a Worker's secrets travel in its
//! deployed config.
//!
//! The rules ([`limits`], [`plan`]) are shared by the plugin, which checks the key names and
//! sizes of each Secret before anything is uploaded, and by `celld-bucket merge-vars`, which
//! checks again and merges the values in the pod ([`merge`], [`mounted`]). No message of this
//! module holds a value: only Secret names, key names and sizes.

pub mod error;
pub mod jsonc;
pub mod limits;
pub mod merge;
pub mod mounted;
pub mod plan;

pub use error::VarsError;
pub use limits::{MAX_TOTAL_BYTES, MAX_VALUE_BYTES};
pub use plan::{KeyInfo, Plan, SecretKeys};
