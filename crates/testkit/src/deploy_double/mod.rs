//! `celld-deploy-double`: a test double of celld v0.4's `celld deploy`, for the local control
//! plane only. It takes the same command line and writes to the bucket what celld writes (the
//! version's modules and a manifest under `deploy/<script>/<version>/`, then with
//! compare-and-swap `deploy/<script>/current.json` and last `deploy/current.json`), without
//! bundling and only to an S3, GCS or Azure Blob emulator on this machine.
//!
//! [`DeployDouble`] makes `kubectl exec` of `celld` in a deploy pod run it (a kwok Exec rule).

pub mod args;
pub mod bucket;
pub mod cloud;
pub mod endpoint;
pub mod error;
pub mod hold;
pub mod pointer;
pub mod project;
pub mod run;
pub mod store;
pub mod version;
mod volumes;
mod wiring;

pub use error::DeployError;
pub use wiring::{
    AGENT_BIN_ENV, AGENT_BINARY, DEPLOY_POD_SELECTOR, DOUBLE_BINARY, DeployDouble, POD_TOOLS,
};
