//! Flux's source-controller and the OCI registry of the local control plane, as up.sh records
//! them in `.testenv/flux.env` and `.testenv/oci.env`: Flux sources (`Bucket` on the S3 server,
//! `OCIRepository` on the registry) created in a test's namespace (`controller`), the artifact
//! source-controller makes of them (`source`, `status.artifact`), and that artifact
//! downloaded from its loopback URL (`artifact`).
//!
//! ```no_run
//! # async fn demo(dir: &std::path::Path) -> celld_testkit::Result<()> {
//! use celld_testkit::{ARTIFACT_TIMEOUT, TestEnv, unpack_tar_gz};
//! let env = TestEnv::new("flux").await?;
//! let (flux, registry) = (env.flux()?, env.oci_registry()?);
//! let digest = registry.push_artifact(dir, "worker", "v1").await?;
//! let source = flux
//!     .create_oci_repository(&env.client(), env.namespace(), "worker", &registry, "worker", "v1")
//!     .await?;
//! let artifact = source.wait_for_artifact(&env.client(), ARTIFACT_TIMEOUT).await?;
//! assert_eq!(artifact.revision, format!("v1@{digest}"));
//! let files = unpack_tar_gz(&artifact.download().await?)?;
//! # Ok(()) }
//! ```

mod artifact;
mod controller;
mod registry;
mod settings;
mod source;

pub use artifact::{FluxArtifact, unpack_tar_gz};
pub use controller::Flux;
pub use registry::OciRegistry;
pub use source::{ARTIFACT_TIMEOUT, FluxSource, FluxSourceKind};
