//! A fleet's bucket prefix as celld v0.4 lays it out, read and written from a deploy pod of the
//! fleet with `celld-bucket`, the deployer image's bucket agent (the credentials stay in the
//! pod: the plugin never reads them).
//!
//! Under the fleet's prefix, `celld deploy` writes each version's modules and `manifest.json`
//! to `deploy/<script>/<version>/`, then with compare-and-swap `deploy/<script>/current.json`
//! and last the fleet pointer `deploy/current.json`.

pub mod client;
pub mod keys;
pub mod manifest;
pub mod versions;

pub use client::{BucketClient, Expect, Object};
pub use keys::Pointer;
