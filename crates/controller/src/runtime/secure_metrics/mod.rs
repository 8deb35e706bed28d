//! `/metrics` for authenticated and authorized scrapers only (`--metrics-secure`), over HTTPS:
//! each request must carry a bearer token that the API server's TokenReview accepts and whose
//! identity a SubjectAccessReview allows `get` of `/metrics` ([`review`]), else it is answered
//! 401 or 403 with what is missing ([`verdict`]). Verdicts are remembered briefly
//! ([`verdicts`]); the certificate is self-signed at start ([`certificate`]).

pub mod certificate;
pub mod review;
pub mod verdict;
pub mod verdicts;

use crate::metrics::Metrics;
use axum::Router;
use axum::extract::State;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use kube::Client;
use review::Reviewer;
use rustls::ServerConfig;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tracing::{debug, warn};
use verdict::Verdict;
use verdicts::Verdicts;

/// The media type of the exposition.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long a client may take over its TLS handshake, and over a request's headers.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Who may read the metrics: the reviewer and its recent verdicts.
#[derive(Clone)]
pub struct Access {
    reviewer: Reviewer,
    verdicts: Arc<Verdicts>,
}

impl Access {
    /// Access judged by the API server `client` talks to, as the operator.
    pub fn new(client: Client) -> Self {
        Self {
            reviewer: Reviewer::new(client),
            verdicts: Arc::new(Verdicts::default()),
        }
    }

    /// The verdict on a request with these headers.
    pub async fn verdict(&self, headers: &HeaderMap) -> Result<Verdict, review::ReviewError> {
        let Some(token) = bearer_token(headers) else {
            return Ok(Verdict::no_token());
        };
        if let Some(known) = self.verdicts.get(token, Instant::now()) {
            return Ok(known);
        }
        let verdict = self.reviewer.review(token).await?;
        self.verdicts.put(token, verdict.clone(), Instant::now());
        Ok(verdict)
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case).
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let (scheme, token) = headers.get(AUTHORIZATION)?.to_str().ok()?.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[derive(Clone)]
struct Secured {
    metrics: Arc<Metrics>,
    access: Access,
}

async fn metrics(State(s): State<Secured>, headers: HeaderMap) -> Response {
    match s.access.verdict(&headers).await {
        Ok(Verdict::Allowed) => ([(CONTENT_TYPE, OPENMETRICS)], s.metrics.encode()).into_response(),
        Ok(refused) => (refused.status(), refused.message().to_string()).into_response(),
        Err(e) => {
            warn!(error = %e, "a /metrics request could not be checked");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "the bearer token could not be checked with the API server: retry; the operator's log says why\n",
            )
                .into_response()
        }
    }
}

/// Serves `/metrics` of `metrics` over TLS (`tls`) on `listener`, each request judged by
/// `access`, until the task is dropped. Every connection runs on a task of its own, so a client
/// that stalls its handshake holds up nobody else.
pub async fn serve_on(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    access: Access,
    tls: Arc<ServerConfig>,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/metrics", get(self::metrics))
        .with_state(Secured { metrics, access });
    let acceptor = TlsAcceptor::from(tls);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, say: wait rather than spin.
                warn!(error = %e, "accepting a /metrics connection failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(CLIENT_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    return debug!(%peer, error = %e, "a TLS handshake on /metrics failed");
                }
                Err(_) => return debug!(%peer, "a TLS handshake on /metrics timed out"),
            };
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(CLIENT_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = served {
                debug!(%peer, error = %e, "a /metrics connection ended with an error");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn token_of(header: Option<&'static str>) -> Option<String> {
        let mut headers = HeaderMap::new();
        if let Some(value) = header {
            headers.insert(AUTHORIZATION, HeaderValue::from_static(value));
        }
        bearer_token(&headers).map(str::to_string)
    }

    #[test]
    fn only_a_bearer_token_is_a_token() {
        assert_eq!(token_of(Some("Bearer abc")), Some("abc".into()));
        assert_eq!(token_of(Some("bearer  abc ")), Some("abc".into()));
        assert_eq!(token_of(Some("Basic dXNlcjpwdw==")), None);
        assert_eq!(token_of(Some("Bearer ")), None);
        assert_eq!(token_of(Some("Bearer")), None);
        assert_eq!(token_of(None), None);
    }
}
