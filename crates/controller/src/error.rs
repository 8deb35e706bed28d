//! Errors of a reconcile. Each says what went wrong and, where a user can act, what to do.

use crate::failure::{self, Failure};
use celld_api::ResolveError;
use celld_api::reasons::{Reason, transient};

/// Why a reconcile failed; the fleet is retried with exponential backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call failed.
    #[error("{action} failed: {source}")]
    Kube {
        /// What the operator was doing.
        action: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The fleet's storage did not resolve.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// An object did not serialize.
    #[error("serializing {what} failed: {source}")]
    Serialize {
        /// What was serialized.
        what: String,
        /// The serializer's error.
        #[source]
        source: serde_json::Error,
    },
    /// The operator is stopping.
    #[error(transparent)]
    Closed(#[from] Closed),
    /// The object has no namespace or name (the API server never sends these).
    #[error("{0} has no name or namespace")]
    Unnamed(&'static str),
    /// Some of a fleet's children could not be read, applied or pruned; the others were, and
    /// the fleet's Degraded condition says which failed and why.
    #[error("CelldFleet {fleet} is degraded ({}); the operator retries", failure::summary(.failures))]
    Children {
        /// The fleet (namespace/name).
        fleet: String,
        /// What failed, in the order met; never empty.
        failures: Vec<Failure>,
    },
}

/// The caches are gone: the controller is shutting down.
#[derive(Debug, thiserror::Error)]
#[error("the operator is stopping: its caches are closed")]
pub struct Closed;

impl Error {
    /// Wraps a client error with what the operator was doing.
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Self::Kube {
            action: action.into(),
            source,
        }
    }

    /// The reason this error is counted under in the reconcile error metric.
    pub fn reason(&self) -> Reason {
        match self {
            Self::Kube { source, .. } if transient(source) => Reason::ApiUnavailable,
            Self::Kube { .. } | Self::Serialize { .. } | Self::Unnamed(_) => Reason::ApiError,
            Self::Closed(_) => Reason::ApiUnavailable,
            Self::Resolve(e) => Reason::of_resolve(e),
            Self::Children { failures, .. } => {
                failures.first().map_or(Reason::ChildRejected, |f| f.reason)
            }
        }
    }
}
