//! A recording API server double for the writers' tests: it accepts every status patch
//! (answering with a given object) and every Event (answering with the Event sent), and
//! records each request as `METHOD path`.

use http::{Method, Request, Response};
use kube::Client;
use kube::client::Body;
use std::sync::{Arc, Mutex};

/// Every request the double was sent, as `METHOD path`.
pub type Sent = Arc<Mutex<Vec<String>>>;

/// A client of the double that answers status patches with `answer`, in namespace `apps`.
pub fn recording(answer: Vec<u8>) -> (Client, Sent) {
    let sent: Sent = Arc::default();
    let log = sent.clone();
    let service = tower::service_fn(move |request: Request<Body>| {
        let (log, answer) = (log.clone(), answer.clone());
        async move {
            log.lock()
                .unwrap()
                .push(format!("{} {}", request.method(), request.uri().path()));
            let body = if request.method() == Method::POST {
                use http_body_util::BodyExt;
                request
                    .into_body()
                    .collect()
                    .await
                    .unwrap()
                    .to_bytes()
                    .to_vec()
            } else {
                answer
            };
            Ok::<_, tower::BoxError>(Response::new(Body::from(body)))
        }
    });
    (Client::new(service, "apps"), sent)
}

/// The requests sent since the last look.
pub fn taken(sent: &Sent) -> Vec<String> {
    std::mem::take(&mut *sent.lock().unwrap())
}
