//! `celld-bucket`: the one program `kubectl celld history` and `rollback` run in a deploy pod of
//! a fleet to read and write its bucket prefix. It finds the bucket in the pod's environment,
//! the same celld v0.4 environment the fleet's nodes get (`CELLD_BUCKET`, `S3_ENDPOINT`,
//! `AWS_REGION`, `AZURE_STORAGE_ACCOUNT_NAME`, the keys of a credentials Secret), and
//! authenticates with the default credential chain of each cloud (static keys, EKS IRSA and Pod
//! Identity, GKE Workload Identity, AKS workload and managed identity) through the
//! [`object_store`](https://crates.io/crates/object_store) crate. Every answer is one line of
//! JSON ([`wire::Answer`]) on stdout.
//!
//! `celld-bucket merge-vars` merges Secrets mounted in the deploy pod into the Worker's `vars`
//! ([`vars`]) before `celld deploy` runs.
//!
//! Without the `agent` feature only [`wire`] and [`vars`] are built: the plugin parses the
//! answers with the one and checks Secrets before a deploy with the other.

pub mod vars;
pub mod wire;

#[cfg(feature = "agent")]
pub mod cli;
#[cfg(feature = "agent")]
pub mod error;
#[cfg(feature = "agent")]
pub mod gcs_upload;
#[cfg(feature = "agent")]
pub mod location;
#[cfg(feature = "agent")]
pub mod merge_vars;
#[cfg(feature = "agent")]
pub mod ops;
#[cfg(feature = "agent")]
pub mod store;
