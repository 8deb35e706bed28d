//! Writes to the run's buckets as `celld deploy` does last (the deployment pointer), from one
//! S3 client per bucket kept for the whole run: the stand-in for the deploy pods writes a
//! pointer per publish, and a client made per write would pay its set-up each time.

use crate::error::{Error, Result};
use celld_testkit::S3Settings;
use futures::FutureExt;
use futures::future::BoxFuture;
use std::sync::Arc;

/// One object write: the key and the body, to the writer's bucket.
type Put = dyn Fn(String, Vec<u8>) -> BoxFuture<'static, Result<(), String>> + Send + Sync;

/// The key of the deployment pointer under `prefix` (a key prefix without a trailing slash).
pub fn pointer_key(prefix: &str) -> String {
    celld_fixtures::pointer::fleet_pointer_key(prefix)
}

/// Writes objects to one bucket of the S3 server.
#[derive(Clone)]
pub struct BucketWriter {
    bucket: String,
    put: Arc<Put>,
}

impl BucketWriter {
    /// A writer of the bucket of `s3`, with a client of its own.
    pub fn new(s3: &S3Settings) -> Self {
        let client = s3.client();
        let bucket = s3.bucket.clone();
        let target = bucket.clone();
        let put = move |key: String, body: Vec<u8>| {
            let request = client
                .put_object()
                .bucket(&target)
                .key(key)
                .body(body.into());
            async move {
                request
                    .send()
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("{e:?}"))
            }
            .boxed()
        };
        BucketWriter {
            bucket,
            put: Arc::new(put),
        }
    }

    /// Creates the bucket of `s3` on its server.
    pub async fn create_bucket(s3: &S3Settings) -> Result<()> {
        s3.client()
            .create_bucket()
            .bucket(&s3.bucket)
            .send()
            .await
            .map_err(|e| Error::Process {
                what: format!("creating the bucket {} on the S3 server", s3.bucket),
                detail: format!("{e:?}"),
            })?;
        Ok(())
    }

    /// Writes `body` to `key`.
    pub async fn put(&self, key: &str, body: Vec<u8>) -> Result<()> {
        (self.put)(key.to_string(), body)
            .await
            .map_err(|detail| Error::Process {
                what: format!("writing s3://{}/{key}", self.bucket),
                detail,
            })
    }
}
