//! A client that checks the write fence immediately before it sends any write: server-side
//! apply, status patches, deletes and Events all go through it, so none can leave a replica
//! that may have lost the leader Lease. Reads and lists pass unchecked. It also counts every
//! request it sends, in one place: reads in `api_reads_total`, writes by kind and verb in
//! `api_writes_total`.

use crate::leadership::fence::Fence;
use crate::metrics::Metrics;
use futures::future::BoxFuture;
use http::{Method, Request, Response};
use kube::Client;
use kube::client::Body;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::limit::{RateLimit, rate::Rate};
use tracing::warn;

/// Whether a request of this method changes state on the API server.
pub fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The kind and verb a write request is counted under: the kind of the resource its path names
/// (its plural where the operator never writes it) and apply, status, create, update, patch or
/// delete.
pub fn write_of<B>(request: &Request<B>) -> (String, &'static str) {
    // /api/v1/namespaces/{ns}/{plural}/{name}[/{subresource}], or /apis/{group}/{version}/...
    let segments: Vec<&str> = request.uri().path().split('/').collect();
    let resource = match segments.iter().position(|s| *s == "namespaces") {
        Some(i) if segments.len() > i + 2 => &segments[i + 2..],
        _ => {
            let start = if segments.get(1) == Some(&"api") {
                3
            } else {
                4
            };
            segments.get(start..).unwrap_or_default()
        }
    };
    let plural = resource.first().copied().unwrap_or_default();
    let subresource = resource.get(2).copied();
    let kind = WRITTEN_KINDS
        .iter()
        .find_map(|(p, kind)| (p == plural).then(|| kind.clone()))
        .unwrap_or_else(|| plural.to_string());
    let apply = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/apply-patch"));
    let verb = match (request.method(), subresource) {
        (&Method::POST, _) => "create",
        (&Method::DELETE, _) => "delete",
        (&Method::PUT, _) => "update",
        (_, Some("status")) => "status",
        _ if apply => "apply",
        _ => "patch",
    };
    (kind, verb)
}

/// The kinds the operator writes, by plural: built once, read on every write.
static WRITTEN_KINDS: std::sync::LazyLock<Vec<(String, String)>> =
    std::sync::LazyLock::new(written_kinds);

/// The kinds the operator writes, by plural.
fn written_kinds() -> Vec<(String, String)> {
    fn of<K: kube::Resource<DynamicType = ()>>() -> (String, String) {
        (K::plural(&()).into_owned(), K::kind(&()).into_owned())
    }
    vec![
        of::<celld_api::CelldFleet>(),
        of::<celld_api::CelldObjectStore>(),
        of::<k8s_openapi::api::apps::v1::StatefulSet>(),
        of::<k8s_openapi::api::core::v1::Service>(),
        of::<k8s_openapi::api::networking::v1::NetworkPolicy>(),
        of::<k8s_openapi::api::policy::v1::PodDisruptionBudget>(),
        of::<k8s_openapi::api::networking::v1::Ingress>(),
        of::<gateway_api::httproutes::HttpRoute>(),
        of::<k8s_openapi::api::events::v1::Event>(),
    ]
}

/// The tower service behind [`fenced`].
#[derive(Clone)]
struct Fenced {
    inner: Client,
    fence: Arc<Fence>,
    metrics: Arc<Metrics>,
}

impl tower::Service<Request<Body>> for Fenced {
    type Response = Response<Body>;
    type Error = tower::BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let refused = if is_write(request.method()) {
            let refused = self.fence.check().err();
            if refused.is_none() {
                let (kind, verb) = write_of(&request);
                self.metrics.write(&kind, verb);
            }
            refused
        } else {
            self.metrics.read();
            None
        };
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Some(lost) = refused {
                warn!(method = %request.method(), path = request.uri().path(), error = %lost, "write refused");
                return Err(lost.into());
            }
            inner.send(request).await.map_err(Into::into)
        })
    }
}

/// `client`, refusing every write while `fence` is closed, counting reads in `metrics`, and
/// sending at most `per_second` requests each second (watches have clients of their own).
pub fn fenced(client: Client, fence: Arc<Fence>, metrics: Arc<Metrics>, per_second: u32) -> Client {
    let namespace = client.default_namespace().to_string();
    let fenced = Fenced {
        inner: client,
        fence,
        metrics,
    };
    let rate = Rate::new(u64::from(per_second.max(1)), Duration::from_secs(1));
    Client::new(RateLimit::new(fenced, rate), namespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leadership::fence::{LeadershipLost, write_window};
    use std::sync::Mutex;
    use std::time::SystemTime;

    /// A client whose API server answers `{}` to everything and records what it was sent.
    fn recording() -> (Client, Arc<Mutex<Vec<Method>>>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let log = sent.clone();
        let service = tower::service_fn(move |request: Request<Body>| {
            log.lock().unwrap().push(request.method().clone());
            async { Ok::<_, tower::BoxError>(Response::new(Body::from(b"{}".to_vec()))) }
        });
        (Client::new(service, "default"), sent)
    }

    fn request(method: Method) -> Request<Body> {
        Request::builder()
            .method(method)
            .uri("/api/v1/namespaces/default/configmaps/x")
            .body(Body::from(Vec::new()))
            .unwrap()
    }

    fn to(method: Method, path: &str, content_type: Option<&str>) -> Request<()> {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(t) = content_type {
            request = request.header(http::header::CONTENT_TYPE, t);
        }
        request.body(()).unwrap()
    }

    #[test]
    fn writes_are_named_by_kind_and_verb() {
        let apply = Some("application/apply-patch+yaml");
        let cases = [
            (
                to(
                    Method::PATCH,
                    "/apis/apps/v1/namespaces/ns/statefulsets/web?fieldManager=celld-operator&force=true",
                    apply,
                ),
                ("StatefulSet", "apply"),
            ),
            (
                to(
                    Method::PATCH,
                    "/apis/platform.celld.dev/v1alpha1/namespaces/ns/celldfleets/web/status",
                    apply,
                ),
                ("CelldFleet", "status"),
            ),
            (
                to(
                    Method::PATCH,
                    "/api/v1/namespaces/ns/services/web",
                    Some("application/json-patch+json"),
                ),
                ("Service", "patch"),
            ),
            (
                to(
                    Method::POST,
                    "/apis/events.k8s.io/v1/namespaces/ns/events",
                    None,
                ),
                ("Event", "create"),
            ),
            (
                to(
                    Method::DELETE,
                    "/apis/policy/v1/namespaces/ns/poddisruptionbudgets/web",
                    None,
                ),
                ("PodDisruptionBudget", "delete"),
            ),
            (
                to(Method::PUT, "/api/v1/namespaces/ns/configmaps/x", None),
                ("configmaps", "update"),
            ),
            (
                to(Method::POST, "/api/v1/namespaces", None),
                ("namespaces", "create"),
            ),
        ];
        for (request, (kind, verb)) in cases {
            assert_eq!(
                write_of(&request),
                (kind.to_string(), verb),
                "{} {}",
                request.method(),
                request.uri()
            );
        }
    }

    fn refused_because(result: kube::Result<Response<Body>>) -> Option<LeadershipLost> {
        match result {
            Err(kube::Error::Service(e)) => e.downcast_ref::<LeadershipLost>().cloned(),
            _ => None,
        }
    }

    #[test]
    fn only_reads_count_as_reads() {
        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(!is_write(&method), "{method}");
        }
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(is_write(&method), "{method}");
        }
    }

    #[tokio::test]
    async fn requests_beyond_the_rate_wait_for_the_next_second() {
        let (inner, sent) = recording();
        let fence = Arc::new(Fence::unfenced());
        let client = fenced(inner, fence, Arc::new(Metrics::default()), 2);
        let start = tokio::time::Instant::now();
        for _ in 0..5 {
            client.send(request(Method::GET)).await.unwrap();
        }
        assert_eq!(sent.lock().unwrap().len(), 5);
        assert!(
            start.elapsed() >= Duration::from_secs(2),
            "5 requests at 2 per second span at least 2 seconds: {:?}",
            start.elapsed()
        );
    }

    #[tokio::test]
    async fn a_closed_fence_stops_writes_before_they_are_sent() {
        let (inner, sent) = recording();
        let fence = Arc::new(Fence::closed());
        let metrics = Arc::new(Metrics::default());
        let client = fenced(inner, fence.clone(), metrics.clone(), 1000);

        assert!(client.send(request(Method::GET)).await.is_ok());
        assert_eq!(metrics.total_reads(), 1);
        assert_eq!(metrics.total_writes(), 0);
        for method in [Method::PATCH, Method::POST, Method::DELETE] {
            let result = client.send(request(method)).await;
            assert_eq!(
                refused_because(result),
                Some(LeadershipLost::RenewalOverdue)
            );
        }
        assert_eq!(
            *sent.lock().unwrap(),
            vec![Method::GET],
            "no write was sent"
        );

        assert_eq!(metrics.total_writes(), 0, "a refused write is not counted");
        fence.renewed(SystemTime::now(), write_window(15, 5));
        assert!(client.send(request(Method::PATCH)).await.is_ok());
        assert_eq!(metrics.total_writes(), 1, "a sent write is counted once");
        assert_eq!(metrics.total_reads(), 1, "and not as a read");
        fence.lose();
        let result = client.send(request(Method::DELETE)).await;
        assert_eq!(refused_because(result), Some(LeadershipLost::Lost));
        assert_eq!(*sent.lock().unwrap(), vec![Method::GET, Method::PATCH]);
    }
}
