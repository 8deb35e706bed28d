//! Errors of a reconcile. Each says what went wrong and, where a user can act, what to do.

use celld_api::ResolveError;

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
    /// The object has no namespace or name (the API server never sends these).
    #[error("{0} has no name or namespace")]
    Unnamed(&'static str),
}

impl Error {
    /// Wraps a client error with what the operator was doing.
    pub fn kube(action: impl Into<String>, source: kube::Error) -> Self {
        Self::Kube {
            action: action.into(),
            source,
        }
    }
}
