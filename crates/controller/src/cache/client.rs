//! A client for one watch, reporting its signs of life to its [`WatchStream`]: every successful
//! list or watch response and every chunk a watch delivers (an event or a bookmark). A watch
//! response dropped before the API server ended it was given up by kube's watcher for silence,
//! and is reported as stalled.

use crate::cache::health::WatchStream;
use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Response, Uri};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kube::Client;
use kube::client::Body;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Whether `uri` asks to watch.
pub fn is_watch(uri: &Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split('&')
            .any(|pair| matches!(pair, "watch=true" | "watch=1" | "watch"))
    })
}

/// A response body that reports each chunk it delivers.
struct Reporting {
    inner: Body,
    stream: Option<Arc<WatchStream>>,
    ended: bool,
}

impl HttpBody for Reporting {
    type Data = Bytes;
    type Error = kube::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, kube::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) if frame.is_data() => {
                if let Some(stream) = &this.stream {
                    stream.beat();
                }
            }
            // The server ended it, or the connection failed: either way not given up for silence.
            Poll::Ready(None | Some(Err(_))) => this.ended = true,
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Reporting {
    fn drop(&mut self) {
        if let Some(stream) = &self.stream
            && !self.ended
        {
            stream.stalled();
        }
    }
}

#[derive(Clone)]
struct Observed {
    inner: Client,
    stream: Arc<WatchStream>,
}

impl tower::Service<Request<Body>> for Observed {
    type Response = Response<Reporting>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (inner, stream) = (self.inner.clone(), self.stream.clone());
        let watch = is_watch(request.uri());
        Box::pin(async move {
            let response = inner.send(request).await?;
            let ok = response.status().is_success();
            if ok {
                stream.beat();
            }
            Ok(response.map(|body| Reporting {
                inner: body,
                stream: (watch && ok).then_some(stream),
                ended: false,
            }))
        })
    }
}

/// `client`, reporting the life of the watch it serves to `stream`. Give each watch its own.
pub fn observed(client: Client, stream: Arc<WatchStream>) -> Client {
    let namespace = client.default_namespace().to_string();
    Client::new(
        Observed {
            inner: client,
            stream,
        },
        namespace,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::health::{WatchHealth, WatchSettings};
    use crate::metrics::Metrics;
    use std::time::{Duration, Instant};

    #[test]
    fn watch_requests_are_told_apart() {
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        assert!(is_watch(&uri(
            "/api/v1/secrets?&watch=true&timeoutSeconds=20&allowWatchBookmarks=true"
        )));
        assert!(is_watch(&uri("/api/v1/secrets?watch=1")));
        assert!(!is_watch(&uri("/api/v1/secrets?limit=500")));
        assert!(!is_watch(&uri("/api/v1/secrets?watchers=true")));
        assert!(!is_watch(&uri("/api/v1/secrets")));
    }

    /// A client whose API server answers every request with `body` and `status`.
    fn serving(body: &'static str, status: u16) -> Client {
        let service = tower::service_fn(move |_: Request<Body>| {
            let response = Response::builder()
                .status(status)
                .body(Body::from(body.as_bytes().to_vec()))
                .unwrap();
            async move { Ok::<_, tower::BoxError>(response) }
        });
        Client::new(service, "default")
    }

    fn get(uri: &str) -> Request<Body> {
        Request::builder()
            .uri(uri)
            .body(Body::from(Vec::new()))
            .unwrap()
    }

    fn silent_for(health: &WatchHealth, now: Instant) -> Option<Duration> {
        health.stale_at(now).first().map(|s| s.silent_for)
    }

    #[tokio::test]
    async fn events_and_bookmarks_are_signs_of_life() {
        let metrics = Arc::new(Metrics::default());
        let health = WatchHealth::new(WatchSettings::new(1, 12), metrics.clone());
        let t0 = Instant::now();
        let stream = health.stream_at("fleets/CelldFleet", t0 - Duration::from_secs(60));
        let client = observed(
            serving("{\"type\":\"BOOKMARK\"}\n{\"type\":\"ADDED\"}\n", 200),
            stream,
        );
        assert!(silent_for(&health, t0).is_some(), "silent before");
        let response = client
            .send(get("/api/v1/secrets?watch=true"))
            .await
            .unwrap();
        let body = response.into_body().collect_bytes().await.unwrap();
        assert_eq!(body.iter().filter(|b| **b == b'\n').count(), 2);
        assert_eq!(silent_for(&health, Instant::now()), None);
        assert!(
            metrics.encode().contains(
                "celld_operator_watch_last_event_timestamp_seconds{watch=\"fleets/CelldFleet\"}"
            ),
            "{}",
            metrics.encode()
        );
        assert!(!metrics.encode().contains("watch_stalls_total{"));
    }

    #[tokio::test]
    async fn a_refused_watch_is_no_sign_of_life() {
        let health = WatchHealth::new(WatchSettings::new(1, 12), Arc::new(Metrics::default()));
        let t0 = Instant::now() - Duration::from_secs(60);
        let stream = health.stream_at("fleets/CelldFleet", t0);
        let client = observed(serving("{\"code\":429}", 429), stream);
        let response = client
            .send(get("/api/v1/secrets?watch=true"))
            .await
            .unwrap();
        let _ = response.into_body().collect_bytes().await;
        assert!(silent_for(&health, Instant::now()).is_some());
    }

    #[tokio::test]
    async fn a_watch_dropped_before_it_ended_is_reported_stalled() {
        let metrics = Arc::new(Metrics::default());
        let health = WatchHealth::new(WatchSettings::new(1, 12), metrics.clone());
        let stream = health.stream("fleets/CelldFleet");
        let client = observed(serving("{\"type\":\"BOOKMARK\"}\n", 200), stream);
        let response = client
            .send(get("/api/v1/secrets?watch=true"))
            .await
            .unwrap();
        let mut body = response.into_body();
        let frame = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        assert!(frame.is_some_and(|f| f.is_ok()));
        drop(body);
        assert!(
            metrics
                .encode()
                .contains("celld_operator_watch_stalls_total{watch=\"fleets/CelldFleet\"} 1"),
            "{}",
            metrics.encode()
        );
        // A list read to its end is not a stall.
        let response = client.send(get("/api/v1/secrets")).await.unwrap();
        drop(response.into_body().collect_bytes().await);
        assert!(
            metrics
                .encode()
                .contains("celld_operator_watch_stalls_total{watch=\"fleets/CelldFleet\"} 1")
        );
    }
}
