//! Stand-ins for the nodes' internal API (kwok pods have no network): one HTTP server on
//! loopback that the operator connects to for every node (`Settings::node_api_connect_to`, the
//! production request otherwise) and that answers `GET /state` for the node the Host header
//! names, with the restores the test sets.

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::get;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Nodes {
    /// Cells restoring per pod name; 0 when absent.
    restoring: BTreeMap<String, u64>,
    /// Pods whose state was asked for.
    asked: BTreeSet<String>,
}

/// The server, its address and the restores it reports.
#[derive(Clone)]
pub struct NodeStates {
    nodes: Arc<Mutex<Nodes>>,
    /// Where it listens (`127.0.0.1:PORT`).
    pub address: String,
}

async fn state(State(nodes): State<Arc<Mutex<Nodes>>>, headers: HeaderMap) -> String {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    // web-0.web-peer.NAMESPACE.svc:8081 → web-0
    let pod = host.split('.').next().unwrap_or_default().to_string();
    let mut nodes = nodes.lock().expect("node states");
    let restoring = nodes.restoring.get(&pod).copied().unwrap_or(0);
    nodes.asked.insert(pod);
    json!({"restoring": restoring, "residents": 3, "rss": 1_000_000}).to_string()
}

impl NodeStates {
    /// Starts the server; every node reports no restores.
    pub async fn start() -> Self {
        let nodes = Arc::new(Mutex::new(Nodes::default()));
        let app = Router::new()
            .route("/state", get(state))
            .with_state(nodes.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port for the node states");
        let address = listener.local_addr().expect("bound address").to_string();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { nodes, address }
    }

    /// Makes `pod` report `cells` restoring.
    pub fn set_restoring(&self, pod: &str, cells: u64) {
        self.nodes
            .lock()
            .expect("node states")
            .restoring
            .insert(pod.to_string(), cells);
    }

    /// The pods whose state the operator asked for.
    pub fn asked(&self) -> BTreeSet<String> {
        self.nodes.lock().expect("node states").asked.clone()
    }
}
