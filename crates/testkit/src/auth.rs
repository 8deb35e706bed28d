//! Clients that authenticate as someone other than the admin, to test RBAC.

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::PostParams;
use kube::config::AuthInfo;
use kube::{Api, Client};
use secrecy::SecretString;

use crate::client::config;
use crate::error::{Error, Result};

/// Lifetime asked for the service account tokens (the API server's minimum is 10 minutes).
const TOKEN_SECONDS: i64 = 600;

/// A short-lived token of the service account `namespace/name` (TokenRequest API).
pub async fn service_account_token(client: &Client, namespace: &str, name: &str) -> Result<String> {
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(TOKEN_SECONDS),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let response = accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .map_err(|e| {
            Error::kube(
                format!("requesting a token of service account {namespace}/{name}"),
                e,
            )
        })?;
    response
        .status
        .map(|status| status.token)
        .ok_or_else(|| Error::Invalid {
            what: "TokenRequest response",
            value: format!("{namespace}/{name}"),
            reason: "has no status.token",
        })
}

/// A client for the local control plane that authenticates as the service account
/// `namespace/name` (a bearer token instead of the admin's client certificate).
pub async fn client_as_service_account(
    admin: &Client,
    namespace: &str,
    name: &str,
) -> Result<Client> {
    let token = service_account_token(admin, namespace, name).await?;
    let mut config = config().await?;
    config.auth_info = AuthInfo {
        token: Some(SecretString::from(token)),
        ..AuthInfo::default()
    };
    config.default_namespace = namespace.to_owned();
    Client::try_from(config).map_err(|e| {
        Error::kube(
            format!("building a client as service account {namespace}/{name}"),
            e,
        )
    })
}

/// A client for the local control plane that impersonates the user `user` (the admin's
/// credentials with an `Impersonate-User` header): it holds only what RBAC grants `user` and the
/// `system:authenticated` group, for tests of what a role lets a person do.
pub async fn client_as_user(user: &str) -> Result<Client> {
    let mut config = config().await?;
    config.auth_info.impersonate = Some(user.to_owned());
    Client::try_from(config)
        .map_err(|e| Error::kube(format!("building a client impersonating user {user}"), e))
}
