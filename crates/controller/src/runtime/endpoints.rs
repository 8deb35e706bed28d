//! The operator's endpoints as its flags ask: all three in plain HTTP on one address, or, with
//! `--metrics-secure`, the probes there and `/metrics` over HTTPS on an address of its own, to
//! authorized scrapers only.

use super::secure_metrics::certificate::{self, CertificateError};
use super::secure_metrics::{self, Access};
use super::server::{self, Health, MetricsAt};
use kube::Client;
use std::net::SocketAddr;
use tokio::net::TcpListener;

/// Where the endpoints listen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoints {
    /// `/healthz` and `/readyz`, and `/metrics` when `secure_metrics` is None.
    pub plain: SocketAddr,
    /// `/metrics` over HTTPS, for authorized scrapers only.
    pub secure_metrics: Option<SocketAddr>,
}

/// Why the endpoints are not served.
#[derive(Debug, thiserror::Error)]
pub enum EndpointsError {
    /// An address could not be listened on.
    #[error(
        "listening on {addr} for {what} failed: {source}; free the port or choose another address with {flag}"
    )]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What was to be served there.
        what: &'static str,
        /// The flag that sets the address.
        flag: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The TLS identity of `/metrics` could not be made.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// A server stopped.
    #[error("the health and metrics server stopped: {0}")]
    Serve(#[from] std::io::Error),
}

async fn bind(
    addr: SocketAddr,
    what: &'static str,
    flag: &'static str,
) -> Result<TcpListener, EndpointsError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| EndpointsError::Bind {
            addr,
            what,
            flag,
            source,
        })
}

/// Listens where `endpoints` says and serves until the task is dropped; `client` (the
/// operator's own) asks the API server about the scrapers' tokens.
pub async fn serve(
    endpoints: Endpoints,
    health: Health,
    client: Client,
) -> Result<(), EndpointsError> {
    let plain = bind(endpoints.plain, "/healthz and /readyz", "--metrics-addr").await?;
    let secure = match endpoints.secure_metrics {
        Some(addr) => Some(bind(addr, "/metrics over HTTPS", "--secure-metrics-addr").await?),
        None => None,
    };
    serve_on(plain, secure, health, client).await
}

/// Serves on listeners already bound: the probes (and `/metrics` too without `secure`) on
/// `plain`, and `/metrics` over HTTPS on `secure`.
pub async fn serve_on(
    plain: TcpListener,
    secure: Option<TcpListener>,
    health: Health,
    client: Client,
) -> Result<(), EndpointsError> {
    let Some(secure) = secure else {
        return Ok(server::serve_on(plain, health, MetricsAt::Here).await?);
    };
    let port = secure.local_addr()?.port();
    let tls = certificate::self_signed()?;
    let metrics = health.metrics.clone();
    tokio::try_join!(
        server::serve_on(plain, health, MetricsAt::Https(port)),
        secure_metrics::serve_on(secure, metrics, Access::new(client), tls),
    )?;
    Ok(())
}
