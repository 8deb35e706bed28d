//! One token judged by the API server, the way Kubernetes components guard their own
//! `/metrics`: a TokenReview (authentication.k8s.io/v1) says who holds it, then a
//! SubjectAccessReview (authorization.k8s.io/v1) whether that identity may `get` the
//! non-resource URL `/metrics`. The operator needs `create` on both
//! ([`crate::rbac::metrics_auth_rules`]).

use super::verdict::{READER_ROLE, Verdict};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};

/// The path and verb a scraper must be allowed.
pub const PATH: &str = "/metrics";

/// The API server could not judge a token.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// A review could not be created.
    #[error(
        "creating a {kind} to check a /metrics request failed: {source}; the operator needs `create` on tokenreviews (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io), which the install's ClusterRole grants"
    )]
    Api {
        /// TokenReview or SubjectAccessReview.
        kind: &'static str,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
    /// The API server answered a review without a status.
    #[error(
        "the API server answered a {0} without a status: retry; if it persists, check the API server's authentication and authorization setup"
    )]
    NoStatus(&'static str),
}

/// Asks the API server about tokens with the operator's own client.
#[derive(Clone)]
pub struct Reviewer {
    client: Client,
}

impl Reviewer {
    /// A reviewer asking through `client` (the operator's identity).
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Who holds `token` and whether they may `get` [`PATH`].
    pub async fn review(&self, token: &str) -> Result<Verdict, ReviewError> {
        let user = match self.authenticate(token).await? {
            Ok(user) => user,
            Err(refusal) => return Ok(refusal),
        };
        self.authorize(user).await
    }

    async fn authenticate(&self, token: &str) -> Result<Result<UserInfo, Verdict>, ReviewError> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_string()),
                ..TokenReviewSpec::default()
            },
            ..TokenReview::default()
        };
        let answer = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| ReviewError::Api {
                kind: "TokenReview",
                source: Box::new(e),
            })?;
        let status = answer.status.ok_or(ReviewError::NoStatus("TokenReview"))?;
        match (status.authenticated, status.user) {
            (Some(true), Some(user)) => Ok(Ok(user)),
            _ => Ok(Err(Verdict::Unauthenticated(
                "the bearer token was not accepted: the API server's TokenReview did not authenticate it (expired, revoked, or not a token of this cluster)\n".into(),
            ))),
        }
    }

    async fn authorize(&self, user: UserInfo) -> Result<Verdict, ReviewError> {
        let name = user.username.clone().unwrap_or_default();
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                uid: user.uid,
                groups: user.groups,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(PATH.into()),
                    verb: Some("get".into()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| ReviewError::Api {
                kind: "SubjectAccessReview",
                source: Box::new(e),
            })?;
        let status = answer
            .status
            .ok_or(ReviewError::NoStatus("SubjectAccessReview"))?;
        if status.allowed {
            Ok(Verdict::Allowed)
        } else {
            Ok(Verdict::Forbidden(format!(
                "{name} may not get {PATH}: bind it to the ClusterRole {READER_ROLE} with a ClusterRoleBinding\n"
            )))
        }
    }
}
