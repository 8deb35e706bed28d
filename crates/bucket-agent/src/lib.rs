//! `celld-bucket`: the one program `kubectl celld history` and `rollback` run in a deploy pod of
//! a fleet to read and write its bucket prefix. It finds the bucket in the pod's environment,
//! the same celld v0.4 environment the fleet's nodes get (`CELLD_BUCKET`, `S3_ENDPOINT`,
//! `AWS_REGION`, `AZURE_STORAGE_ACCOUNT_NAME`, the keys of a credentials Secret), and
//! authenticates with the default credential chain of each cloud (static keys, EKS IRSA and Pod
//! Identity, GKE Workload Identity, AKS workload and managed identity) through the
//! [`object_store`](https://crates.io/crates/object_store) crate. Every answer is one line of
//! JSON ([`wire::Answer`]) on stdout.
//!
//! Without the `agent` feature only [`wire`] is built: the plugin parses the answers with it.

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
pub mod ops;
#[cfg(feature = "agent")]
pub mod store;
