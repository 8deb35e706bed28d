//! The client of the fleet's bucket, built from the pod's environment exactly as celld reads
//! it, with each cloud's default credential chain through `object_store`.
//!
//! Besides celld's variables, `object_store`'s own are honoured: `GOOGLE_BASE_URL` (a GCS API
//! other than `https://storage.googleapis.com`) and `AZURE_STORAGE_ENDPOINT` (an Azure Blob
//! service other than the account's public one). celld takes no endpoint for GCS and Azure;
//! these exist for emulators and private endpoints, and a plain `http://` one is allowed.

use crate::error::AgentError;
use crate::gcs_upload::GcsUpload;
use crate::location::{Cloud, Location};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::{ClientConfigKey, ClientOptions, ObjectStore, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// The GCS API `object_store` uses unless `GOOGLE_BASE_URL` says otherwise.
pub const GCS_BASE_URL: &str = "https://storage.googleapis.com";

/// A request gives up after this long (retries included).
const RETRY_TIMEOUT: Duration = Duration::from_secs(30);

/// The fleet's bucket prefix and a client of it.
pub struct Bucket {
    /// The bucket and prefix.
    pub location: Location,
    /// `CELLD_BUCKET` as given, for messages.
    pub url: String,
    /// Reads, lists and (S3, Azure) writes.
    pub store: Arc<dyn ObjectStore>,
    /// GCS writes (the JSON API's conditional upload); None for S3 and Azure.
    pub gcs: Option<GcsUpload>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn retry() -> RetryConfig {
    RetryConfig {
        max_retries: 2,
        retry_timeout: RETRY_TIMEOUT,
        ..RetryConfig::default()
    }
}

fn is_http(url: Option<&String>) -> bool {
    url.is_some_and(|u| u.starts_with("http://"))
}

impl Bucket {
    /// The bucket of `CELLD_BUCKET`, with the credentials of this process's environment.
    pub fn from_env() -> Result<Self, AgentError> {
        let location = crate::location::from_env()?;
        Self::new(location, var("CELLD_BUCKET").unwrap_or_default())
    }

    /// The bucket `url` (parsed as `location`), with the credentials of this process's
    /// environment.
    pub fn new(location: Location, url: String) -> Result<Self, AgentError> {
        let client = |source: object_store::Error| AgentError::Client {
            bucket: url.clone(),
            source: Box::new(source),
        };
        let (store, gcs): (Arc<dyn ObjectStore>, _) = match location.scheme {
            Cloud::S3 => {
                let endpoint = var("S3_ENDPOINT");
                let mut b = AmazonS3Builder::from_env()
                    .with_bucket_name(&location.name)
                    .with_retry(retry());
                if let Some(endpoint) = &endpoint {
                    // As celld: an endpoint means path-style addressing; http:// just works.
                    b = b
                        .with_endpoint(endpoint)
                        .with_virtual_hosted_style_request(false)
                        .with_allow_http(is_http(Some(endpoint)));
                }
                (Arc::new(b.build().map_err(client)?), None)
            }
            Cloud::Gcs => {
                let base = var("GOOGLE_BASE_URL").unwrap_or_else(|| GCS_BASE_URL.to_string());
                let allow_http = is_http(Some(&base)).to_string();
                let store = GoogleCloudStorageBuilder::from_env()
                    .with_bucket_name(&location.name)
                    .with_base_url(&base)
                    .with_config(
                        GoogleConfigKey::Client(ClientConfigKey::AllowHttp),
                        &allow_http,
                    )
                    .with_retry(retry())
                    .build()
                    .map_err(client)?;
                let options =
                    ClientOptions::new().with_config(ClientConfigKey::AllowHttp, allow_http);
                let upload =
                    GcsUpload::new(store.credentials().clone(), &options, &base, &location.name)
                        .map_err(client)?;
                (Arc::new(store), Some(upload))
            }
            Cloud::Azure => {
                if var("AZURE_STORAGE_ACCOUNT_NAME").is_none() {
                    return Err(AgentError::NoAzureAccount { bucket: url });
                }
                let mut b = MicrosoftAzureBuilder::from_env()
                    .with_container_name(&location.name)
                    .with_retry(retry());
                let endpoint = var("AZURE_STORAGE_ENDPOINT");
                if is_http(endpoint.as_ref()) {
                    b = b.with_allow_http(true);
                }
                (Arc::new(b.build().map_err(client)?), None)
            }
        };
        Ok(Self {
            location,
            url,
            store,
            gcs,
        })
    }
}
