//! celld's internal node API, which the operator reads between two nodes of a rolling upgrade:
//! `GET /state` on each node's internal listener, at its stable name through the peer Service.
//! Plain HTTP, as celld serves it; the fleet's NetworkPolicy admits the operator's pods.

use crate::upgrade::decide::Restores;
use bytes::Bytes;
use celld_api::contract::{NodeState, STATE_PATH};
use futures::future::join_all;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use std::time::Duration;
use tokio::net::TcpStream;

/// The largest `/state` answer read.
const MAX_STATE_BYTES: usize = 256 * 1024;

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
    /// The node did not answer in time.
    #[error("{address} did not answer within {timeout:?}")]
    Timeout {
        /// The node's address.
        address: String,
        /// The bound.
        timeout: Duration,
    },
    /// The HTTP exchange failed.
    #[error("GET {STATE_PATH} on {address} failed: {message}")]
    Http {
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

/// A client of the nodes' internal API.
#[derive(Debug, Clone)]
pub struct NodeApi {
    /// Connect here instead of the node's address; the request is unchanged (its Host names the
    /// node). For an operator outside the cluster behind a forwarding proxy, and for tests.
    connect_to: Option<String>,
    /// Bound of one request, connection included.
    timeout: Duration,
}

impl NodeApi {
    /// A client connecting to each node's own address, or to `connect_to` for all of them.
    pub fn new(connect_to: Option<String>, timeout: Duration) -> Self {
        Self {
            connect_to,
            timeout,
        }
    }

    /// The state of the node at `address` (`HOST:PORT`).
    pub async fn state(&self, address: &str) -> Result<NodeState, NodeApiError> {
        tokio::time::timeout(self.timeout, self.get_state(address))
            .await
            .map_err(|_| NodeApiError::Timeout {
                address: address.to_string(),
                timeout: self.timeout,
            })?
    }

    async fn get_state(&self, address: &str) -> Result<NodeState, NodeApiError> {
        let http = |e: &dyn std::fmt::Display| NodeApiError::Http {
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
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| http(&e))?;
        // The connection ends with the sender, at the end of this function.
        tokio::spawn(connection);
        let request = Request::get(STATE_PATH)
            .header(header::HOST, address)
            .body(Empty::<Bytes>::new())
            .map_err(|e| http(&e))?;
        let response = sender.send_request(request).await.map_err(|e| http(&e))?;
        if !response.status().is_success() {
            return Err(NodeApiError::Status {
                address: address.to_string(),
                status: response.status(),
            });
        }
        let body = Limited::new(response.into_body(), MAX_STATE_BYTES)
            .collect()
            .await
            .map_err(|e| http(&e))?
            .to_bytes();
        NodeState::parse(&body).map_err(|source| NodeApiError::Body {
            address: address.to_string(),
            source,
        })
    }

    /// Whether any of `nodes` (pod name, address) restores cells: asks them all at once and
    /// names the first that does or did not answer.
    pub async fn restores(&self, nodes: &[(String, String)]) -> Restores {
        let states = join_all(nodes.iter().map(|(_, address)| self.state(address))).await;
        nodes
            .iter()
            .zip(states)
            .find_map(|((pod, _), state)| match state {
                Ok(NodeState { restoring: 0 }) => None,
                Ok(NodeState { restoring }) => Some(format!(
                    "node {pod} reports {restoring} cells restoring; the next node is updated once every node reports none"
                )),
                Err(e) => Some(format!(
                    "the state of node {pod} could not be read ({e}); the next node is updated once every node reports no restores"
                )),
            })
            .map_or(Restores::None, Restores::Busy)
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
    async fn a_node_that_does_not_answer_is_busy_by_name() {
        let (address, _server) =
            serve_once("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n").await;
        let api = NodeApi::new(Some(address), Duration::from_secs(5));
        let nodes = [(
            "web-1".to_string(),
            "web-1.web-peer.shop.svc:8081".to_string(),
        )];
        let Restores::Busy(why) = api.restores(&nodes).await else {
            panic!("a 503 is not a quiet node");
        };
        assert!(why.contains("node web-1") && why.contains("503"), "{why}");
    }
}
