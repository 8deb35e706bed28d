//! The operator's plain HTTP endpoints: `/healthz` (alive: no watch silent for longer than its
//! bound, so a replica whose caches stopped advancing is restarted), `/readyz` (connected and
//! watching, leader or standby), both for the kubelet and without authentication, and
//! `/metrics` (Prometheus) unless it is served over HTTPS to authorized scrapers
//! ([`super::secure_metrics`]).

use super::secure_metrics::OPENMETRICS;
use crate::cache::health::WatchHealth;
use crate::metrics::Metrics;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared with the handlers.
#[derive(Clone)]
pub struct Health {
    /// The operator's metrics.
    pub metrics: Arc<Metrics>,
    /// Set once the operator reached the API server and is leading or standing by.
    pub ready: Arc<AtomicBool>,
    /// The life of the running controllers' watches.
    pub watches: Arc<WatchHealth>,
}

async fn healthz(State(h): State<Health>) -> (StatusCode, String) {
    let stale = h.watches.stale();
    if stale.is_empty() {
        return (StatusCode::OK, "ok".into());
    }
    let list: Vec<String> = stale.iter().map(ToString::to_string).collect();
    (
        StatusCode::SERVICE_UNAVAILABLE,
        format!("caches stopped advancing: {}", list.join("; ")),
    )
}

async fn readyz(State(h): State<Health>) -> (StatusCode, &'static str) {
    if h.ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    }
}

async fn metrics(State(h): State<Health>) -> ([(&'static str, &'static str); 1], String) {
    ([("content-type", OPENMETRICS)], h.metrics.encode())
}

/// Where `/metrics` is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsAt {
    /// Here, in plain HTTP, to anyone.
    Here,
    /// Over HTTPS on this port, to authorized scrapers only: here it answers 404 saying so.
    Https(u16),
}

/// Serves the endpoints on an already bound listener until the task is dropped.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    health: Health,
    metrics_at: MetricsAt,
) -> std::io::Result<()> {
    let probes = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz));
    let app = match metrics_at {
        MetricsAt::Here => probes.route("/metrics", get(metrics)),
        MetricsAt::Https(port) => probes.route(
            "/metrics",
            get(move || async move {
                (
                    StatusCode::NOT_FOUND,
                    format!("/metrics is served over HTTPS on port {port}, to bearer tokens allowed to get it\n"),
                )
            }),
        ),
    };
    axum::serve(listener, app.with_state(health)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::health::WatchSettings;
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    #[tokio::test]
    async fn health_readiness_and_metrics() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let metrics = Arc::new(Metrics::default());
        metrics.reconciled(true, 0.01);
        let ready = Arc::new(AtomicBool::new(false));
        let watches = Arc::new(WatchHealth::new(WatchSettings::new(1, 12), metrics.clone()));
        tokio::spawn(serve_on(
            listener,
            Health {
                metrics,
                ready: ready.clone(),
                watches: watches.clone(),
            },
            MetricsAt::Here,
        ));

        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.0 200"));
        watches.stream("fleets/CelldFleet");
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.0 200"));
        watches.stream_at(
            "fleets/StatefulSet",
            Instant::now() - Duration::from_secs(13),
        );
        let unhealthy = get(addr, "/healthz").await;
        assert!(unhealthy.starts_with("HTTP/1.0 503"), "{unhealthy}");
        assert!(
            unhealthy
                .ends_with("caches stopped advancing: watch fleets/StatefulSet silent for 13s"),
            "{unhealthy}"
        );
        watches.forget_all();
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.0 200"));
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.0 503"));
        ready.store(true, Ordering::Relaxed);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.0 200"));
        let body = get(addr, "/metrics").await;
        assert!(
            body.contains("celld_operator_reconciles_total{result=\"ok\"} 1"),
            "{body}"
        );
        assert!(body.contains("celld_operator_leader 0"), "{body}");
    }

    #[tokio::test]
    async fn metrics_served_elsewhere_are_not_served_here() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let metrics = Arc::new(Metrics::default());
        let watches = Arc::new(WatchHealth::new(WatchSettings::new(1, 12), metrics.clone()));
        let health = Health {
            metrics,
            ready: Arc::new(AtomicBool::new(true)),
            watches,
        };
        tokio::spawn(serve_on(listener, health, MetricsAt::Https(8443)));
        let reply = get(addr, "/metrics").await;
        assert!(reply.starts_with("HTTP/1.0 404"), "{reply}");
        assert!(reply.contains("over HTTPS on port 8443"), "{reply}");
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.0 200"));
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.0 200"));
    }
}
