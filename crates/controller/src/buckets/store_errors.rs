//! Failed object-store requests described the same way each time they fail the same way. The
//! messages of `object_store` carry how long the request took and how often it was retried,
//! and the stores' error bodies carry a request id: quoted as they are, a bucket that stays
//! unreadable would change the fleet's status at every read.

use std::error::Error as _;

/// `error` without the parts that change from one failed request to the next: the time taken,
/// the retries, and the body of an error answer (only its status and, from an XML error body,
/// its `<Code>` are kept). A connection that failed ends with its root cause, such as
/// "Connection refused".
pub fn describe(error: &object_store::Error) -> String {
    let mut text = without_timing(&error.to_string());
    text = without_body(&text);
    let mut cause: Option<&(dyn std::error::Error + 'static)> = error.source();
    let mut root = None;
    let mut over_http = false;
    while let Some(e) = cause {
        over_http |= e.is::<object_store::client::HttpError>();
        root = Some(e);
        cause = e.source();
    }
    if over_http && let Some(root) = root {
        let root = root.to_string();
        if !text.ends_with(&root) {
            text = format!("{text}: {root}");
        }
    }
    text
}

/// Drops " in 102.1ms, after 1 retries, max_retries: 1, retry_timeout: 3s " from
/// "Error performing GET url in 102.1ms, after ... - cause".
fn without_timing(text: &str) -> String {
    let Some(start) = text.find("Error performing ") else {
        return text.to_string();
    };
    let Some(at) = text[start..].find(" in ").map(|i| start + i) else {
        return text.to_string();
    };
    let Some(end) = text[at..].find(" - ").map(|i| at + i) else {
        return text.to_string();
    };
    format!("{}{}", &text[..at], &text[end..])
}

/// Keeps "Server returned non-2xx status code: 403 Forbidden" and the body's `<Code>`, if any,
/// instead of the whole body.
fn without_body(text: &str) -> String {
    const STATUS: &str = "status code: ";
    let Some(at) = text.find(STATUS).map(|i| i + STATUS.len()) else {
        return text.to_string();
    };
    let rest = &text[at..];
    let status_end = rest.find(": ").unwrap_or(rest.len());
    let mut kept = text[..at + status_end].to_string();
    let body = &rest[status_end..];
    if let Some(code) = between(body, "<Code>", "</Code>") {
        kept.push_str(&format!(" ({code})"));
    }
    kept
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buckets::object_store::{StoreEndpoints, StoreSource};
    use crate::buckets::pointer::PointerSource;
    use celld_api::{BucketUrl, ResolvedStorage};
    use k8s_openapi::api::core::v1::Secret;
    use std::time::Duration;

    #[test]
    fn timing_and_retries_are_dropped() {
        let a = "Generic S3 error: Error performing GET http://h/b/k in 102.158775ms, after 1 retries, max_retries: 1, retry_timeout: 3s  - HTTP error: error sending request";
        let b = "Generic S3 error: Error performing GET http://h/b/k in 7.1ms - HTTP error: error sending request";
        assert_eq!(
            without_timing(a),
            "Generic S3 error: Error performing GET http://h/b/k - HTTP error: error sending request"
        );
        assert_eq!(without_timing(a), without_timing(b));
    }

    #[test]
    fn an_error_body_is_reduced_to_its_status_and_code() {
        let answer = "Error performing GET http://h/b/k - Server returned non-2xx status code: 500 Internal Server Error: <?xml version=\"1.0\"?><Error><Code>InternalError</Code><RequestId>4442587FB7D0A2F9</RequestId></Error>";
        assert_eq!(
            without_body(answer),
            "Error performing GET http://h/b/k - Server returned non-2xx status code: 500 Internal Server Error (InternalError)"
        );
        assert_eq!(without_body("no status here"), "no status here");
    }

    #[tokio::test]
    async fn an_unreachable_store_reads_the_same_every_time() {
        let storage = ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse("s3://b/p").expect("bucket"),
            // Nothing listens on port 1.
            endpoint: Some("http://127.0.0.1:1".into()),
            region: "us-east-1".into(),
            allow_http: true,
            azure_storage_account: None,
            credentials_secret: Some("creds".into()),
        };
        let secret: Secret = serde_json::from_value(serde_json::json!({"data": {
            "AWS_ACCESS_KEY_ID": "QUs=", "AWS_SECRET_ACCESS_KEY": "U0s="}}))
        .expect("secret");
        let source = StoreSource::new(
            &storage,
            Some(&secret),
            &StoreEndpoints::default(),
            Duration::from_secs(3),
        )
        .expect("client");
        let first = format!("{:?}", source.read(&storage, None).await);
        let second = format!("{:?}", source.read(&storage, None).await);
        assert_eq!(first, second);
        assert!(first.contains("Connection refused"), "{first}");
        assert!(!first.contains("ms"), "{first}");
    }
}
