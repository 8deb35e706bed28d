//! A client of celld's node API: `GET /state` and `POST /reload` on each node's internal
//! listener, at its stable name through the peer Service. Plain HTTP, as celld serves it; the
//! fleet's NetworkPolicy admits the operator's pods. Every request is bounded in time, and the
//! requests in flight across all fleets are bounded too. The client carries the operator's
//! [`Reachability`] of the nodes, which its readers tell what each state read met.

use crate::nodes::reachability::Reachability;
use crate::nodes::unanswered::Unanswered;
use bytes::Bytes;
use celld_api::contract::node_api::{NodeState, STATE_PATH};
use celld_api::contract::node_api::{RELOAD_PATH, Reload};
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// The largest answer read.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Requests to nodes in flight at once, across all fleets.
pub const MAX_IN_FLIGHT: usize = 64;

/// Why a node's `/state` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NodeApiError {
    /// No TCP connection.
    #[error("could not connect to {address}: {source}")]
    Connect {
        /// The node's address.
        address: String,
        /// What the connection attempt met.
        source: std::io::Error,
    },
    /// No answer in time: no connection was made (`connected` false), or the node took it and
    /// did not answer.
    #[error("{address} {} within {timeout:?}", if *connected { "did not answer" } else { "could not be reached" })]
    Timeout {
        /// The node's address.
        address: String,
        /// The bound.
        timeout: Duration,
        /// Whether a connection was made before the bound.
        connected: bool,
    },
    /// The HTTP exchange failed.
    #[error("{request} on {address} failed: {message}")]
    Http {
        /// The request (`GET /state`).
        request: String,
        /// The node's address.
        address: String,
        /// What failed.
        message: String,
    },
    /// The node answered with an error status.
    #[error("GET {STATE_PATH} on {address} answered {status}")]
    Status {
        /// The node's address.
        address: String,
        /// Its answer.
        status: StatusCode,
    },
    /// The answer is not celld's state JSON.
    #[error("GET {STATE_PATH} on {address} answered something that is not celld's state: {source}")]
    Body {
        /// The node's address.
        address: String,
        /// What parsing met.
        source: serde_json::Error,
    },
}

impl NodeApiError {
    /// Its cause, as a status tells it.
    pub fn unanswered(&self) -> Unanswered {
        match self {
            Self::Connect { .. }
            | Self::Timeout {
                connected: false, ..
            } => Unanswered::Unreachable,
            Self::Timeout {
                connected: true, ..
            } => Unanswered::Silent,
            Self::Status { status, .. } => Unanswered::ErrorStatus(status.as_u16()),
            Self::Http { .. } | Self::Body { .. } => Unanswered::NotState,
        }
    }
}

/// A client of the nodes' internal API.
#[derive(Debug, Clone)]
pub struct NodeApi {
    /// Connect here instead of the node's address; the request is unchanged (its Host names the
    /// node). For an operator outside the cluster behind a forwarding proxy, and for tests.
    connect_to: Option<String>,
    /// Bound of one request, connection and wait for a slot included.
    timeout: Duration,
    /// Slots for requests in flight.
    slots: Arc<Semaphore>,
    /// Whether the nodes answer the operator at all.
    reachability: Arc<Reachability>,
}

impl NodeApi {
    /// A client connecting to each node's own address, or to `connect_to` for all of them.
    pub fn new(connect_to: Option<String>, timeout: Duration) -> Self {
        Self::with(connect_to, timeout, Reachability::default())
    }

    /// A client as [`new`](Self::new) makes, whose state reads go to `reachability`.
    pub fn with(connect_to: Option<String>, timeout: Duration, reachability: Reachability) -> Self {
        Self {
            connect_to,
            timeout,
            slots: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            reachability: Arc::new(reachability),
        }
    }

    /// Whether the nodes answer the operator at all, told by the readers of their states.
    pub fn reachability(&self) -> &Reachability {
        &self.reachability
    }

    /// The state of the node at `address` (`HOST:PORT`).
    pub async fn state(&self, address: &str) -> Result<NodeState, NodeApiError> {
        let (status, body) = self.bounded(Method::GET, STATE_PATH, address).await?;
        if !status.is_success() {
            return Err(NodeApiError::Status {
                address: address.to_string(),
                status,
            });
        }
        NodeState::parse(&body).map_err(|source| NodeApiError::Body {
            address: address.to_string(),
            source,
        })
    }

    /// Asks the node at `address` to read the deployment pointer now, and what it answered.
    pub async fn reload(&self, address: &str) -> Result<Reload, NodeApiError> {
        let (status, body) = self.bounded(Method::POST, RELOAD_PATH, address).await?;
        Ok(Reload::read(status.as_u16(), &body))
    }

    /// `method path` on the node at `address`, within the timeout.
    async fn bounded(
        &self,
        method: Method,
        path: &str,
        address: &str,
    ) -> Result<(StatusCode, Bytes), NodeApiError> {
        let connected = AtomicBool::new(false);
        let exchange = async {
            let _slot = self.slots.acquire().await;
            self.exchange(&method, path, address, &connected).await
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| NodeApiError::Timeout {
                address: address.to_string(),
                timeout: self.timeout,
                connected: connected.load(Ordering::Relaxed),
            })?
    }

    /// `method path` on the node at `address`; `connected` is set once the connection is made.
    async fn exchange(
        &self,
        method: &Method,
        path: &str,
        address: &str,
        connected: &AtomicBool,
    ) -> Result<(StatusCode, Bytes), NodeApiError> {
        let http = |e: &dyn std::fmt::Display| NodeApiError::Http {
            request: format!("{method} {path}"),
            address: address.to_string(),
            message: e.to_string(),
        };
        let dial = self.connect_to.as_deref().unwrap_or(address);
        let stream = TcpStream::connect(dial)
            .await
            .map_err(|source| NodeApiError::Connect {
                address: address.to_string(),
                source,
            })?;
        connected.store(true, Ordering::Relaxed);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| http(&e))?;
        // The connection ends with the sender, at the end of this function.
        tokio::spawn(connection);
        let request = Request::builder()
            .method(method.clone())
            .uri(path)
            .header(header::HOST, address)
            .body(Empty::<Bytes>::new())
            .map_err(|e| http(&e))?;
        let response = sender.send_request(request).await.map_err(|e| http(&e))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| http(&e))?
            .to_bytes();
        Ok((status, body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A one-connection server answering `answer`, returning the request it read.
    async fn serve_once(answer: &'static str) -> (String, tokio::task::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let task = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = vec![0; 4096];
            let n = socket.read(&mut request).await.unwrap();
            socket.write_all(answer.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&request[..n]).into_owned()
        });
        (address, task)
    }

    #[tokio::test]
    async fn reads_the_state_through_the_connect_to_address_with_the_node_as_host() {
        let (address, server) = serve_once(
            "HTTP/1.1 200 OK\r\ncontent-length: 29\r\n\r\n{\"restoring\":3,\"residents\":1}",
        )
        .await;
        let api = NodeApi::new(Some(address), Duration::from_secs(5));
        let state = api.state("web-0.web-peer.shop.svc:8081").await.unwrap();
        assert_eq!(state.restoring, 3);
        let request = server.await.unwrap();
        assert!(request.starts_with("GET /state HTTP/1.1\r\n"), "{request}");
        assert!(
            request
                .to_ascii_lowercase()
                .contains("host: web-0.web-peer.shop.svc:8081\r\n"),
            "{request}"
        );
    }

    #[tokio::test]
    async fn an_error_status_is_not_a_state() {
        let (address, _server) =
            serve_once("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n").await;
        let api = NodeApi::new(Some(address), Duration::from_secs(5));
        let error = api.state("web-1.web-peer.shop.svc:8081").await.unwrap_err();
        assert!(error.to_string().contains("answered 503"), "{error}");
    }

    #[tokio::test]
    async fn each_cause_is_worded_the_same_whatever_the_error_said() {
        // A name that resolves nowhere, dialled as itself: the resolver's words or a timeout,
        // the same cause either way.
        let nowhere = NodeApi::new(None, Duration::from_secs(2));
        let error = nowhere
            .state("web-0.web-peer.shop.invalid:8081")
            .await
            .unwrap_err();
        assert_eq!(error.unanswered(), Unanswered::Unreachable, "{error}");
        // A port nothing listens on.
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let refused = NodeApi::new(
            Some(closed.local_addr().unwrap().to_string()),
            Duration::from_secs(2),
        );
        drop(closed);
        let error = refused
            .state("web-0.web-peer.shop.svc:8081")
            .await
            .unwrap_err();
        assert_eq!(error.unanswered(), Unanswered::Unreachable, "{error}");
        // A node that takes the connection and says nothing.
        let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let quiet = NodeApi::new(
            Some(silent.local_addr().unwrap().to_string()),
            Duration::from_millis(300),
        );
        let _held = tokio::spawn(async move { silent.accept().await });
        let error = quiet
            .state("web-0.web-peer.shop.svc:8081")
            .await
            .unwrap_err();
        assert_eq!(error.unanswered(), Unanswered::Silent, "{error}");
        assert!(error.to_string().contains("did not answer"), "{error}");
        // An error status, and an answer that is not celld's state.
        let (address, _server) =
            serve_once("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n").await;
        let error = NodeApi::new(Some(address), Duration::from_secs(5))
            .state("web-0.web-peer.shop.svc:8081")
            .await
            .unwrap_err();
        assert_eq!(error.unanswered(), Unanswered::ErrorStatus(503));
        let (address, _server) =
            serve_once("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello").await;
        let error = NodeApi::new(Some(address), Duration::from_secs(5))
            .state("web-0.web-peer.shop.svc:8081")
            .await
            .unwrap_err();
        assert_eq!(error.unanswered(), Unanswered::NotState);
        assert_eq!(
            Unanswered::Unreachable.to_string(),
            "the operator cannot reach its node API"
        );
    }

    #[tokio::test]
    async fn posts_the_reload_and_reads_the_refusal() {
        let body = r#"{"ok":false,"error":"deployment module digest mismatch"}"#;
        let answer: &'static str = Box::leak(
            format!(
                "HTTP/1.1 422 Unprocessable Entity\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_boxed_str(),
        );
        let (address, server) = serve_once(answer).await;
        let api = NodeApi::new(Some(address), Duration::from_secs(5));
        let reload = api.reload("web-2.web-peer.shop.svc:8081").await.unwrap();
        assert_eq!(
            reload,
            Reload::Refused("deployment module digest mismatch".into())
        );
        let request = server.await.unwrap();
        assert!(
            request.starts_with("POST /reload HTTP/1.1\r\n"),
            "{request}"
        );
    }
}
