//! The operator's HTTP endpoints: `/healthz` (alive), `/readyz` (connected and watching, leader
//! or standby) and `/metrics` (Prometheus).

use crate::metrics::Metrics;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared with the handlers.
#[derive(Clone)]
pub struct Health {
    /// The operator's metrics.
    pub metrics: Arc<Metrics>,
    /// Set once the operator reached the API server and is leading or standing by.
    pub ready: Arc<AtomicBool>,
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(h): State<Health>) -> (StatusCode, &'static str) {
    if h.ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    }
}

async fn metrics(State(h): State<Health>) -> ([(&'static str, &'static str); 1], String) {
    (
        [(
            "content-type",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        h.metrics.encode(),
    )
}

/// Serves the endpoints on `addr` until the task is dropped.
pub async fn serve(addr: SocketAddr, health: Health) -> std::io::Result<()> {
    let app = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(health);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, app).await
}
