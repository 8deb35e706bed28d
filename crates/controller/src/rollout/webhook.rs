//! The webhook gates: at the end of a wave's bake each webhook gets a POST of the rollout, the
//! wave and its fleets as JSON, and passes the wave by answering 2xx (the Flagger convention).
//! Each call is bounded by the gate's timeout; a failed call is made again by a later
//! reconcile, up to its retries, [`RETRY_EVERY`] apart (no reconcile waits between calls). Redirects are not followed, at most `MAX_ANSWER_BYTES` of an answer
//! are read (for the status' message), and a host that is, or resolves to, a link-local address
//! (cloud metadata endpoints) is never connected to, however it is written.

use celld_api::fleet::parse_duration;
use celld_api::rollout::{GateResult, WebhookGate};
use http::{Method, Request, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// Time between two calls of a webhook that failed.
pub const RETRY_EVERY: Duration = Duration::from_secs(10);

/// The most of an answer read.
const MAX_ANSWER_BYTES: usize = 4096;

/// The most of an answer the status quotes.
const QUOTED: usize = 256;

/// Calls `gate` once with `body`, unless its `last` answer for the wave passed, its retries
/// are spent, or the last call was less than [`RETRY_EVERY`] before `now`: its answer, with
/// the calls made so far.
pub async fn ask(
    gate: &WebhookGate,
    body: &serde_json::Value,
    last: Option<&GateResult>,
    now: Timestamp,
) -> Option<GateResult> {
    let made = last.map_or(0, |l| l.attempts);
    let spent = made > gate.retries.max(0);
    let waiting =
        last.is_some_and(|l| now.duration_since(l.at.0).as_secs_f64() < RETRY_EVERY.as_secs_f64());
    if last.is_some_and(|l| l.passed) || spent || waiting {
        return None;
    }
    let timeout = parse_duration(&gate.timeout).unwrap_or(Duration::from_secs(10));
    let (passed, said) = match tokio::time::timeout(timeout, post(&gate.url, body)).await {
        Ok(Ok(answer)) => (answer.passed, answer.said),
        Ok(Err(e)) => (false, e),
        Err(_) => (false, format!("no answer within {}s", timeout.as_secs())),
    };
    Some(GateResult {
        name: gate.name.clone(),
        passed,
        attempts: made + 1,
        message: (!said.is_empty()).then_some(said),
        at: Time(Timestamp::now()),
    })
}

/// What one call got.
struct Answer {
    passed: bool,
    said: String,
}

/// Whether the operator refuses to call `ip`: link-local (169.254.0.0/16, fe80::/10, which
/// hold the cloud metadata endpoints), AWS's IPv6 metadata endpoint, unspecified, and IPv4 ones
/// written as IPv6.
pub fn forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            let mapped = v6
                .to_ipv4_mapped()
                .is_some_and(|v4| forbidden(IpAddr::V4(v4)));
            mapped
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        }
    }
}

/// Resolves a webhook's host, without the addresses the operator refuses to call.
async fn resolve(name: Name) -> Result<std::vec::IntoIter<SocketAddr>, std::io::Error> {
    let host = name.as_str().to_string();
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
    let allowed: Vec<SocketAddr> = found
        .iter()
        .copied()
        .filter(|a| !forbidden(a.ip()))
        .collect();
    if allowed.is_empty() && !found.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{host} resolves to a link-local address (a cloud metadata endpoint), which the operator does not call"
            ),
        ));
    }
    Ok(allowed.into_iter())
}

/// POSTs `body` to `url`: whether it answered 2xx, and what it said.
async fn post(url: &str, body: &serde_json::Value) -> Result<Answer, String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("{url} is not a URL a request can go to: {e}"))?;
    let host = uri.host().unwrap_or_default().trim_matches(['[', ']']);
    if host.parse::<IpAddr>().is_ok_and(forbidden) {
        return Err(format!(
            "{url} names a link-local address (a cloud metadata endpoint), which the operator does not call"
        ));
    }
    let mut http = HttpConnector::new_with_resolver(tower::service_fn(resolve));
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .map_err(|e| format!("no TLS roots to check {url} with: {e}"))?
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    let client: Client<_, Full<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build(https);
    let request = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::USER_AGENT, "celld-operator")
        .body(Full::new(bytes::Bytes::from(body.to_string())))
        .map_err(|e| format!("{url} is not a URL a request can go to: {e}"))?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("POST {url} failed: {}", error_chain(&e)))?;
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

/// `error` and its causes, as one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut said = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        said.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_local_and_metadata_addresses_are_refused_however_written() {
        for refused in [
            "169.254.169.254",
            "169.254.0.1",
            "0.0.0.0",
            "fe80::1",
            "fe90::1",
            "febf::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "::ffff:a9fe:a9fe",
        ] {
            assert!(forbidden(refused.parse().unwrap()), "{refused}");
        }
        for allowed in [
            "10.0.0.1",
            "127.0.0.1",
            "8.8.8.8",
            "fec0::1",
            "::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!forbidden(allowed.parse().unwrap()), "{allowed}");
        }
    }

    #[tokio::test]
    async fn a_host_written_as_a_number_is_refused_once_resolved() {
        let refused = post("http://2852039166/x", &serde_json::json!({})).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("link-local") && e.contains("2852039166")),
            "{:?}",
            refused.err()
        );
        let literal = post("http://[::ffff:169.254.169.254]/x", &serde_json::json!({})).await;
        assert!(literal.is_err_and(|e| e.contains("link-local")));
    }
}
