//! [`SlowDownFront`]: a real HTTP proxy on 127.0.0.1 in front of an S3 server that answers the
//! first N writes (PUT and POST, conditional or not) with HTTP 503 and S3's `SlowDown` error,
//! as S3 does when a prefix gets more requests than it takes, and forwards every other request
//! unchanged (the Host header too, so signatures stay valid). It counts what it refused.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::oneshot;

use crate::error::{Error, Result};

/// The body of every answer the front gives.
type Body = BoxBody<Bytes, hyper::Error>;

/// The proxy; it stops when dropped.
#[derive(Debug)]
pub struct SlowDownFront {
    endpoint: String,
    refusals: Arc<Refusals>,
    stop: Option<oneshot::Sender<()>>,
}

/// The writes refused so far, and how many to refuse.
#[derive(Debug)]
struct Refusals {
    limit: usize,
    refused: Mutex<Vec<String>>,
}

impl Refusals {
    /// Whether to refuse this write; records it (`METHOD /path`) when so.
    fn take(&self, method: &Method, path: &str) -> bool {
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        let refuse = refused.len() < self.limit;
        if refuse {
            refused.push(format!("{method} {path}"));
        }
        refuse
    }
}

impl SlowDownFront {
    /// Starts the front of the S3 server at `upstream` (`http://HOST:PORT`) on a port of
    /// 127.0.0.1, on a thread of its own, refusing the first `refuse` writes.
    pub fn start(upstream: &str, refuse: usize) -> Result<Self> {
        let authority = upstream
            .strip_prefix("http://")
            .map(|rest| rest.trim_end_matches('/').to_owned())
            .filter(|a| !a.is_empty() && !a.contains('/'))
            .ok_or(Error::Invalid {
                what: "S3 endpoint",
                value: upstream.to_owned(),
                reason: "the SlowDown front forwards to an http://HOST:PORT endpoint only",
            })?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| Error::io("listening for the S3 SlowDown front", "127.0.0.1:0", e))?;
        let address = listener
            .local_addr()
            .map_err(|e| Error::io("reading the SlowDown front's address", "127.0.0.1:0", e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting the SlowDown front's runtime", "127.0.0.1:0", e))?;
        let refusals = Arc::new(Refusals {
            limit: refuse,
            refused: Mutex::new(Vec::new()),
        });
        let (stop, stopped) = oneshot::channel();
        let shared = Arc::clone(&refusals);
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                tokio::select! {
                    () = serve(listener, authority, shared) => {}
                    _ = stopped => {}
                }
            });
        });
        Ok(SlowDownFront {
            endpoint: format!("http://{address}"),
            refusals,
            stop: Some(stop),
        })
    }

    /// Its URL, `http://127.0.0.1:PORT`: the endpoint to give a client instead of the server's.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The writes it refused so far, in order, each as `METHOD /bucket/key`.
    pub fn refused(&self) -> Vec<String> {
        self.refusals
            .refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for SlowDownFront {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Accepts connections until the listener fails, each served on a task of its own.
async fn serve(listener: tokio::net::TcpListener, upstream: String, refusals: Arc<Refusals>) {
    while let Ok((stream, _)) = listener.accept().await {
        let upstream = upstream.clone();
        let refusals = Arc::clone(&refusals);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                answer(request, upstream.clone(), Arc::clone(&refusals))
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Refuses `request` with SlowDown if it is one of the first writes, else forwards it.
async fn answer(
    request: Request<Incoming>,
    upstream: String,
    refusals: Arc<Refusals>,
) -> std::result::Result<Response<Body>, Infallible> {
    let write = matches!(*request.method(), Method::PUT | Method::POST);
    let path = request.uri().path().to_owned();
    if write && refusals.take(request.method(), &path) {
        // Read the body first, as S3 does, so the client is not cut off mid-upload.
        let _ = request.into_body().collect().await;
        return Ok(slow_down(&path));
    }
    Ok(forward(request, &upstream).await.unwrap_or_else(|message| {
        plain(
            StatusCode::BAD_GATEWAY,
            format!("the SlowDown front could not reach the S3 server at {upstream}: {message}"),
        )
    }))
}

/// Sends `request` to `upstream` on a connection of its own and returns the answer.
async fn forward(
    request: Request<Incoming>,
    upstream: &str,
) -> std::result::Result<Response<Body>, String> {
    let stream = tokio::net::TcpStream::connect(upstream)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    Ok(response.map(BodyExt::boxed))
}

/// S3's answer to a client that writes too fast.
fn slow_down(path: &str) -> Response<Body> {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><Resource>{path}</Resource><RequestId>celld-testkit-slow-down</RequestId></Error>"
    );
    let mut response = plain(StatusCode::SERVICE_UNAVAILABLE, xml);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/xml"),
    );
    response
}

fn plain(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests;
