//! Pointer and manifest reads through `object_store`, on every store: with the keys of the
//! fleet's credentials Secret, or, when it names none, the operator's own identity (the default
//! credential chain of the store's client). Pointer reads are conditional on the ETag
//! (If-None-Match) wherever the store honours it.

use crate::buckets::ambient_credentials::{Ambient, no_credential};
use crate::buckets::pointer::{self, POINTER_KEY, Pointer, PointerRead, PointerSource};
use async_trait::async_trait;
use celld_api::contract::POINTER_MAX_BYTES;
use celld_api::labels::secret_keys;
use celld_api::{ResolvedStorage, Scheme};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::path::Path;
use object_store::{ClientOptions, GetOptions, GetResult, ObjectStore, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// Where the operator reads gs:// and az:// buckets instead of the public endpoints (an
/// emulator, or a private endpoint the operator reaches through a proxy). The nodes are not
/// affected: celld takes no endpoint for GCS and Azure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreEndpoints {
    /// Base URL of the GCS API, such as http://127.0.0.1:4443.
    pub gcs: Option<String>,
    /// URL of the Azure Blob service of the account, such as
    /// http://127.0.0.1:10000/devstoreaccount1.
    pub azure_blob: Option<String>,
}

/// A bucket read with an `object_store` client.
pub struct StoreSource {
    pub(super) store: Arc<dyn ObjectStore>,
    /// Whether the client uses the operator's own identity (no credentials Secret).
    ambient: bool,
}

fn string(secret: &Secret, key: &str) -> Result<String, String> {
    optional(secret, key)?.ok_or_else(|| format!("the credentials Secret has no key {key}"))
}

/// A value the client sends in an HTTP header (S3's access key id and session token): no line
/// break or other control character, which the client could not send.
fn header_safe(key: &str, value: String) -> Result<String, String> {
    if value
        .bytes()
        .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f))
    {
        Ok(value)
    } else {
        Err(format!(
            "the credentials Secret's key {key} holds a line break or another control character (often a newline at the end of the file it was created from): store the value without it"
        ))
    }
}

fn optional(secret: &Secret, key: &str) -> Result<Option<String>, String> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|bytes| {
            String::from_utf8(bytes.0.clone())
                .map_err(|_| format!("the credentials Secret's key {key} is not UTF-8"))
        })
        .transpose()
}

/// Builds a store client with `build`, and, for the operator's own identity, again with its
/// credential chain wrapped so that a missing credential is recognised.
macro_rules! with_identity {
    ($builder:expr, $ambient:expr) => {{
        let builder = $builder;
        if $ambient {
            let chain = builder.clone().build().map_err(|e| e.to_string())?;
            let wrapped = Arc::new(Ambient::new(chain.credentials().clone()));
            Arc::new(
                builder
                    .with_credentials(wrapped)
                    .build()
                    .map_err(|e| e.to_string())?,
            ) as Arc<dyn ObjectStore>
        } else {
            Arc::new(builder.build().map_err(|e| e.to_string())?) as Arc<dyn ObjectStore>
        }
    }};
}

impl StoreSource {
    /// A client for `storage`'s bucket with the keys in `secret`, or, without one,
    /// the operator's own identity; each request bounded by `timeout`. The message says why
    /// there is none.
    pub fn new(
        storage: &ResolvedStorage,
        secret: Option<&Secret>,
        endpoints: &StoreEndpoints,
        timeout: Duration,
    ) -> Result<Self, String> {
        let retry = RetryConfig {
            max_retries: 1,
            retry_timeout: timeout,
            ..RetryConfig::default()
        };
        let options = |endpoint: Option<&String>| {
            ClientOptions::new()
                .with_timeout(timeout)
                .with_connect_timeout(timeout.min(Duration::from_secs(2)))
                .with_allow_http(endpoint.is_some_and(|e| e.starts_with("http://")))
        };
        let ambient = secret.is_none();
        let bucket = &storage.bucket.name;
        let store = match storage.bucket.scheme {
            Scheme::S3 => {
                let mut b = match secret {
                    Some(secret) => {
                        let key_id = string(secret, secret_keys::ACCESS_KEY_ID)?;
                        let b = AmazonS3Builder::new()
                            .with_access_key_id(header_safe(secret_keys::ACCESS_KEY_ID, key_id)?)
                            .with_secret_access_key(string(
                                secret,
                                secret_keys::SECRET_ACCESS_KEY,
                            )?);
                        match optional(secret, secret_keys::SESSION_TOKEN)? {
                            Some(token) => {
                                b.with_token(header_safe(secret_keys::SESSION_TOKEN, token)?)
                            }
                            None => b,
                        }
                    }
                    None => AmazonS3Builder::from_env(),
                };
                b = b
                    .with_bucket_name(bucket)
                    .with_region(&storage.region)
                    .with_retry(retry)
                    .with_client_options(options(storage.endpoint.as_ref()));
                if let Some(endpoint) = &storage.endpoint {
                    b = b
                        .with_endpoint(endpoint)
                        .with_virtual_hosted_style_request(false)
                        .with_allow_http(storage.allow_http);
                }
                with_identity!(b, ambient)
            }
            Scheme::Gcs => {
                let mut b = match secret {
                    Some(secret) => GoogleCloudStorageBuilder::new().with_service_account_key(
                        string(secret, secret_keys::GOOGLE_SERVICE_ACCOUNT_KEY)?,
                    ),
                    None => GoogleCloudStorageBuilder::from_env(),
                };
                b = b
                    .with_bucket_name(bucket)
                    .with_retry(retry)
                    .with_client_options(options(endpoints.gcs.as_ref()));
                if let Some(endpoint) = &endpoints.gcs {
                    b = b.with_base_url(endpoint);
                }
                with_identity!(b, ambient)
            }
            Scheme::Azure => {
                let account = storage.azure_storage_account.as_ref().ok_or_else(|| {
                    "an az:// bucket needs an Azure storage account (azureStorageAccount)"
                        .to_string()
                })?;
                let mut b = match secret {
                    Some(secret) => MicrosoftAzureBuilder::new()
                        .with_access_key(string(secret, secret_keys::AZURE_STORAGE_ACCOUNT_KEY)?),
                    None => MicrosoftAzureBuilder::from_env(),
                };
                b = b
                    .with_account(account)
                    .with_container_name(bucket)
                    .with_retry(retry)
                    .with_client_options(options(endpoints.azure_blob.as_ref()));
                if let Some(endpoint) = &endpoints.azure_blob {
                    b = b
                        .with_endpoint(endpoint.clone())
                        .with_allow_http(endpoint.starts_with("http://"));
                }
                with_identity!(b, ambient)
            }
        };
        Ok(Self { store, ambient })
    }
}

#[async_trait]
impl PointerSource for StoreSource {
    async fn read(&self, storage: &ResolvedStorage, etag: Option<&str>) -> PointerRead {
        let url = storage.bucket.object_url(POINTER_KEY);
        let options = GetOptions {
            if_none_match: etag.map(str::to_string),
            ..GetOptions::default()
        };
        let path = Path::from(storage.bucket.key(POINTER_KEY));
        let changed = |pointer| PointerRead::Changed {
            pointer,
            etag: None,
        };
        let error = match self.store.get_opts(&path, options).await {
            Ok(found) => {
                let etag = found.meta.e_tag.clone();
                return match bounded(found, &url, POINTER_MAX_BYTES).await {
                    Ok(body) => PointerRead::Changed {
                        pointer: pointer::parse(&body),
                        etag,
                    },
                    Err(why) => changed(Pointer::Unknown(format!("reading {url}: {why}"))),
                };
            }
            Err(e) => e,
        };
        match error {
            object_store::Error::NotModified { .. } => PointerRead::NotModified,
            object_store::Error::NotFound { .. } => changed(Pointer::Missing),
            e => changed(failed(&url, &e, self.ambient)),
        }
    }

    async fn object(
        &self,
        storage: &ResolvedStorage,
        key: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, String> {
        let path = Path::from(storage.bucket.key(key));
        let found = match self.store.get_opts(&path, GetOptions::default()).await {
            Ok(found) => found,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(crate::buckets::store_errors::describe(&e)),
        };
        bounded(found, &storage.bucket.object_url(key), limit)
            .await
            .map(Some)
    }
}

/// The body of `found` (the object at `url`), when it is at most `limit` bytes: the size the
/// store gives is checked before any of the body is read, and the body is cut off past the
/// limit (a store that sends more than it said, or never stops). What is read is never more
/// than the limit and one chunk.
async fn bounded(found: GetResult, url: &str, limit: u64) -> Result<Vec<u8>, String> {
    let size = found.meta.size;
    if size > limit {
        return Err(format!(
            "{url} is {size} bytes, more than the {limit} the operator reads of it: it is not what celld writes there; replace it with the object celld deploy writes"
        ));
    }
    let mut body = Vec::with_capacity(usize::try_from(size).unwrap_or_default());
    let mut chunks = found.into_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| crate::buckets::store_errors::describe(&e))?;
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(format!(
                "{url} sent more than the {limit} bytes the operator reads of it (it said {size}): it is not what celld writes there"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What a failed read of `url` means: the operator has no credentials for the bucket when it
/// used its own identity and that identity gave none or was refused; otherwise the bucket is
/// unreadable.
fn failed(url: &str, error: &object_store::Error, ambient: bool) -> Pointer {
    if let Some(none) = no_credential(error) {
        return Pointer::NoCredentials(format!(
            "the operator has no credentials for {url}: the fleet names no credentials Secret and the operator's own identity gave none ({none}); give the operator's ServiceAccount a cloud identity that may read it, or set credentialsSecretRef"
        ));
    }
    let refused = matches!(
        error,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }
    );
    if ambient && refused {
        return Pointer::NoCredentials(format!(
            "the operator has no credentials for {url}: the fleet names no credentials Secret and the store refused the operator's own identity ({}); allow that identity to read the object, or set credentialsSecretRef",
            crate::buckets::store_errors::describe(error)
        ));
    }
    Pointer::Unknown(format!(
        "reading {url} failed: {}",
        crate::buckets::store_errors::describe(error)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_sent_in_headers_must_fit_in_one() {
        assert_eq!(
            header_safe("AWS_ACCESS_KEY_ID", "AKIA EXAMPLE\t1".into()),
            Ok("AKIA EXAMPLE\t1".into())
        );
        assert_eq!(
            header_safe("AWS_SESSION_TOKEN", "token\n".into()),
            Err("the credentials Secret's key AWS_SESSION_TOKEN holds a line break or another control character (often a newline at the end of the file it was created from): store the value without it".into())
        );
    }

    #[test]
    fn refusals_of_the_operators_identity_are_missing_credentials() {
        let refused = || object_store::Error::PermissionDenied {
            path: "p/deploy/current.json".into(),
            source: "403 Forbidden".into(),
        };
        assert!(matches!(
            failed("gs://b/p/deploy/current.json", &refused(), true),
            Pointer::NoCredentials(m) if m.starts_with("the operator has no credentials for gs://b/p/deploy/current.json")
        ));
        assert!(matches!(
            failed("gs://b/p/deploy/current.json", &refused(), false),
            Pointer::Unknown(_)
        ));
        let outage = object_store::Error::Generic {
            store: "GCS",
            source: "connection refused".into(),
        };
        assert!(matches!(
            failed("gs://b/p/deploy/current.json", &outage, true),
            Pointer::Unknown(_)
        ));
    }

    #[tokio::test]
    async fn a_pointer_or_manifest_bigger_than_its_limit_is_refused_before_its_body_is_read() {
        use object_store::memory::InMemory;
        use object_store::{ObjectStoreExt, PutPayload};
        let store = Arc::new(InMemory::new());
        let source = StoreSource {
            store: store.clone(),
            ambient: false,
        };
        let storage = ResolvedStorage {
            store: None,
            bucket: celld_api::BucketUrl::parse("s3://b/web").unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: None,
        };
        let huge = vec![b' '; usize::try_from(POINTER_MAX_BYTES).unwrap() + 1];
        store
            .put(
                &Path::from("web/deploy/current.json"),
                PutPayload::from(huge),
            )
            .await
            .unwrap();
        let PointerRead::Changed {
            pointer: Pointer::Unknown(why),
            ..
        } = source.read(&storage, None).await
        else {
            panic!("refused");
        };
        assert!(
            why.contains("s3://b/web/deploy/current.json is 65537 bytes, more than the 65536"),
            "{why}"
        );
        store
            .put(&Path::from("web/m.json"), PutPayload::from(vec![b'x'; 11]))
            .await
            .unwrap();
        assert!(source.object(&storage, "m.json", 10).await.is_err());
        assert_eq!(
            source.object(&storage, "m.json", 11).await,
            Ok(Some(vec![b'x'; 11]))
        );
    }
}
