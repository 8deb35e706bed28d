//! Compare-and-swap writes to GCS through the JSON API: a media upload with `ifGenerationMatch`
//! (`0` for create-only). `object_store` writes GCS objects through the XML API
//! (`x-goog-if-generation-match`), which GCS serves too but the GCS emulator the tests run
//! against does not; the JSON API works on both. The credentials are `object_store`'s: the same
//! default chain its reads use.

use object_store::ClientOptions;
use object_store::client::{HttpClient, HttpConnector, ReqwestConnector};
use object_store::gcp::GcpCredentialProvider;

/// How a conditional upload ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uploaded {
    /// Written.
    Written,
    /// The object's generation was not the expected one (HTTP 412).
    Changed,
}

/// The JSON-API uploader of one bucket.
pub struct GcsUpload {
    credentials: GcpCredentialProvider,
    client: HttpClient,
    base: String,
    bucket: String,
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl GcsUpload {
    /// An uploader of `bucket` at the GCS API `base`, with `credentials`.
    pub fn new(
        credentials: GcpCredentialProvider,
        options: &ClientOptions,
        base: &str,
        bucket: &str,
    ) -> object_store::Result<Self> {
        Ok(Self {
            credentials,
            client: ReqwestConnector::default().connect(options)?,
            base: base.trim_end_matches('/').to_string(),
            bucket: bucket.to_string(),
        })
    }

    /// The upload URL of `key`, on condition `generation` when given.
    pub fn url(&self, key: &str, generation: Option<&str>) -> String {
        let mut url = format!(
            "{}/upload/storage/v1/b/{}/o?uploadType=media&name={}",
            self.base,
            encode(&self.bucket),
            encode(key),
        );
        if let Some(generation) = generation {
            url.push_str(&format!("&ifGenerationMatch={}", encode(generation)));
        }
        url
    }

    /// Writes `body` of `content_type` to the full key `key`, if its generation is
    /// `generation` (`0`: if it does not exist) when given. The error is the message to show.
    pub async fn put_if(
        &self,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
        generation: Option<&str>,
    ) -> Result<Uploaded, String> {
        let token = self
            .credentials
            .get_credential()
            .await
            .map_err(|e| format!("no GCS credentials: {e}"))?;
        let mut request = http::Request::builder()
            .method(http::Method::POST)
            .uri(self.url(key, generation))
            .header(http::header::CONTENT_TYPE, content_type);
        if !token.bearer.is_empty() {
            request = request.header(
                http::header::AUTHORIZATION,
                format!("Bearer {}", token.bearer),
            );
        }
        let request = request.body(body.into()).map_err(|e| e.to_string())?;
        let response = self
            .client
            .execute(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        if status.is_success() {
            return Ok(Uploaded::Written);
        }
        if status == http::StatusCode::PRECONDITION_FAILED {
            return Ok(Uploaded::Changed);
        }
        let text = response
            .into_body()
            .bytes()
            .await
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .chars()
                    .take(300)
                    .collect::<String>()
            })
            .unwrap_or_default();
        Err(format!("HTTP {status}: {}", text.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::StaticCredentialProvider;
    use object_store::gcp::GcpCredential;
    use std::sync::Arc;

    #[test]
    fn upload_urls_encode_the_name_and_carry_the_generation() {
        let upload = GcsUpload::new(
            Arc::new(StaticCredentialProvider::new(GcpCredential {
                bearer: String::new(),
            })),
            &ClientOptions::new(),
            "http://127.0.0.1:4443/",
            "celld",
        )
        .unwrap();
        assert_eq!(
            upload.url("web/deploy/current.json", Some("0")),
            "http://127.0.0.1:4443/upload/storage/v1/b/celld/o?uploadType=media&name=web%2Fdeploy%2Fcurrent.json&ifGenerationMatch=0"
        );
        assert_eq!(
            upload.url("k", None),
            "http://127.0.0.1:4443/upload/storage/v1/b/celld/o?uploadType=media&name=k"
        );
        assert_eq!(encode("a b+c"), "a%20b%2Bc");
    }
}
