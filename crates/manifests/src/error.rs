//! Why the manifests could not be written, and what to do.

use crate::reference;
use std::path::PathBuf;

/// Why the manifests could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No output directory was given.
    #[error("usage: celld-manifests DIR (the repository's config/ directory)")]
    Usage,
    /// A manifest did not serialize.
    #[error("serializing {what} to YAML failed: {source}")]
    Yaml {
        /// What was serialized.
        what: &'static str,
        /// The serializer's error.
        #[source]
        source: serde_yaml::Error,
    },
    /// The VERSION file does not hold a release version.
    #[error("VERSION must hold a release version X.Y.Z, found {0:?}")]
    Version(String),
    /// config/manager/manager.yaml cannot be pinned.
    #[error("config/manager/manager.yaml: {0}")]
    Manager(String),
    /// docs/reference.md lacks the markers of the generated reference.
    #[error("{0} has no generated-reference markers; add the lines `{begin}` and `{end}` where the field reference goes", begin = reference::BEGIN, end = reference::END)]
    ReferenceMarkers(PathBuf),
    /// A file could not be read.
    #[error("reading {path} failed: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("writing {path} failed: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}
