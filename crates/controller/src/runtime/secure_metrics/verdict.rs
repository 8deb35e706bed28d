//! What the API server said of one bearer token: whether it may read `/metrics`, and if not,
//! why, in words the scraper's operator can act on.

use axum::http::StatusCode;

/// The ClusterRole a scraper's identity must be bound to (shipped by both installs).
pub const READER_ROLE: &str = "celld-operator-metrics-reader";

/// One token's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A TokenReview authenticated it and a SubjectAccessReview allowed `get` of `/metrics`.
    Allowed,
    /// No token, or one no TokenReview authenticated: 401, with why.
    Unauthenticated(String),
    /// Authenticated, but not allowed `get` of `/metrics`: 403, with who and what to do.
    Forbidden(String),
}

impl Verdict {
    /// A request without an `Authorization: Bearer` header.
    pub fn no_token() -> Self {
        Self::Unauthenticated(format!(
            "no bearer token: send `Authorization: Bearer <token>` with the token of an identity bound to the ClusterRole {READER_ROLE}\n"
        ))
    }

    /// The HTTP status of a refusal (200 when allowed).
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Allowed => StatusCode::OK,
            Self::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
        }
    }

    /// The body of a refusal (empty when allowed).
    pub fn message(&self) -> &str {
        match self {
            Self::Allowed => "",
            Self::Unauthenticated(why) | Self::Forbidden(why) => why,
        }
    }
}
