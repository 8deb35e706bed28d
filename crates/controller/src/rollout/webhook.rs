//! The webhook gates: at the end of a wave's bake each webhook gets a POST of the rollout, the
//! wave and its fleets as JSON, and passes the wave by answering 2xx (the Flagger convention).
//! Each call is bounded by the gate's timeout; a failed call is made again, up to its retries,
//! [`RETRY_EVERY`] apart. Redirects are not followed, and at most [`MAX_ANSWER_BYTES`] of an
//! answer are read (for the status' message).

use celld_api::fleet::parse_duration;
use celld_api::rollout::{GateResult, WebhookGate};
use http::{Method, Request, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use std::time::Duration;

/// Time between two calls of a webhook that failed.
pub const RETRY_EVERY: Duration = Duration::from_secs(10);

/// The most of an answer read.
const MAX_ANSWER_BYTES: usize = 4096;

/// The most of an answer the status quotes.
const QUOTED: usize = 256;

/// Calls `gate` with `body` until it passes or its retries are spent.
pub async fn ask(gate: &WebhookGate, body: &serde_json::Value) -> GateResult {
    let timeout = parse_duration(&gate.timeout).unwrap_or(Duration::from_secs(10));
    let calls = gate.retries.max(0) + 1;
    let mut attempts = 0;
    let mut last = String::new();
    for call in 0..calls {
        if call > 0 {
            tokio::time::sleep(RETRY_EVERY).await;
        }
        attempts += 1;
        match tokio::time::timeout(timeout, post(&gate.url, body)).await {
            Ok(Ok(answer)) if answer.passed => {
                return result(gate, true, attempts, answer.said);
            }
            Ok(Ok(answer)) => last = answer.said,
            Ok(Err(e)) => last = e,
            Err(_) => last = format!("no answer within {}s", timeout.as_secs()),
        }
    }
    result(gate, false, attempts, last)
}

fn result(gate: &WebhookGate, passed: bool, attempts: i32, said: String) -> GateResult {
    GateResult {
        name: gate.name.clone(),
        passed,
        attempts,
        message: (!said.is_empty()).then_some(said),
        at: Time(Timestamp::now()),
    }
}

/// What one call got.
struct Answer {
    passed: bool,
    said: String,
}

/// POSTs `body` to `url`: whether it answered 2xx, and what it said.
async fn post(url: &str, body: &serde_json::Value) -> Result<Answer, String> {
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .map_err(|e| format!("no TLS roots to check {url} with: {e}"))?
        .https_or_http()
        .enable_http1()
        .build();
    let client: Client<_, Full<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build(https);
    let request = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::USER_AGENT, "celld-operator")
        .body(Full::new(bytes::Bytes::from(body.to_string())))
        .map_err(|e| format!("{url} is not a URL a request can go to: {e}"))?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("POST {url} failed: {e}"))?;
    let status = response.status();
    let answer = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let text: String = String::from_utf8_lossy(&answer)
        .trim()
        .chars()
        .take(QUOTED)
        .collect();
    Ok(Answer {
        passed: status.is_success(),
        said: if text.is_empty() {
            format!("HTTP {status}")
        } else {
            format!("HTTP {status}: {text}")
        },
    })
}
