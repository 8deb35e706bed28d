//! The bucket as the test double writes it: plain uploads, and compare-and-swap writes of the
//! pointers with `If-None-Match: *` (when absent) or `If-Match: <ETag>` (when present).
//!
//! Like celld, the double sends each write once: it does not retry its conditional writes, so
//! one `SlowDown` (HTTP 503), another 5xx or a lost connection on a compare-and-swap write ends
//! the deploy with [`DeployError::MayHaveCommitted`] (the store may have applied it before it
//! answered); running the deploy again is safe, the command being idempotent. A refused upload
//! says its HTTP status and S3 error code.

use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;

use super::bucket::Bucket;
use super::error::DeployError;

/// S3 credentials, from the standard environment variables.
#[derive(Clone)]
pub struct Keys {
    id: String,
    secret: String,
    token: Option<String>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys([redacted])")
    }
}

impl Keys {
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and the optional `AWS_SESSION_TOKEN`.
    pub fn from_env() -> Result<Self, DeployError> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        match (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Ok(Keys {
                id,
                secret,
                token: var("AWS_SESSION_TOKEN"),
            }),
            _ => Err(DeployError::NoCredentials),
        }
    }
}

/// What a compare-and-swap write expects to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// No object: the write uses `If-None-Match: *`.
    Absent,
    /// The object with this ETag: the write uses `If-Match`.
    ETag(String),
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Absent => f.write_str("it did not exist"),
            Expect::ETag(etag) => write!(f, "it had ETag {etag}"),
        }
    }
}

/// A bucket prefix on one S3 endpoint.
#[derive(Debug, Clone)]
pub struct Store {
    client: aws_sdk_s3::Client,
    bucket: Bucket,
    endpoint: String,
}

impl Store {
    /// A client for `bucket` at `endpoint` (path-style addressing), in `region`, that sends each
    /// request once.
    pub fn new(bucket: Bucket, endpoint: &str, region: &str, keys: Keys) -> Self {
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(region.to_string()))
            .endpoint_url(endpoint)
            .force_path_style(true)
            .credentials_provider(Credentials::new(
                keys.id,
                keys.secret,
                keys.token,
                None,
                "celld-deploy-double",
            ))
            .retry_config(RetryConfig::disabled())
            .build();
        Store {
            client: aws_sdk_s3::Client::from_conf(config),
            bucket,
            endpoint: endpoint.to_string(),
        }
    }

    /// The bucket and prefix.
    pub fn bucket(&self) -> &Bucket {
        &self.bucket
    }

    fn failed<E: std::error::Error + ProvideErrorMetadata + 'static>(
        &self,
        action: &'static str,
        key: &str,
        err: &SdkError<E>,
    ) -> DeployError {
        let answer = answer(err).map(|a| format!("{a}: ")).unwrap_or_default();
        DeployError::S3 {
            action,
            bucket: self.bucket.name.clone(),
            key: key.to_string(),
            endpoint: self.endpoint.clone(),
            message: format!("{answer}{}", DisplayErrorContext(err)),
        }
    }

    /// Uploads `body` to `rel` (a key under the prefix), unconditionally.
    pub async fn put(
        &self,
        rel: &str,
        body: Vec<u8>,
        content_type: &str,
    ) -> Result<(), DeployError> {
        let key = self.bucket.key(rel);
        self.client
            .put_object()
            .bucket(&self.bucket.name)
            .key(&key)
            .content_type(content_type)
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(|e| self.failed("uploading", &key, &e))?;
        Ok(())
    }

    /// What a compare-and-swap write of `rel` must expect now: its ETag, or that it is absent.
    pub async fn expect(&self, rel: &str) -> Result<Expect, DeployError> {
        let key = self.bucket.key(rel);
        match self
            .client
            .head_object()
            .bucket(&self.bucket.name)
            .key(&key)
            .send()
            .await
        {
            Ok(head) => match head.e_tag {
                Some(etag) if !etag.is_empty() => Ok(Expect::ETag(etag)),
                _ => Err(DeployError::S3 {
                    action: "reading the ETag of",
                    bucket: self.bucket.name.clone(),
                    key,
                    endpoint: self.endpoint.clone(),
                    message: "the server returned no ETag, so no compare-and-swap is possible"
                        .into(),
                }),
            },
            Err(e) if status(&e) == Some(404) => Ok(Expect::Absent),
            Err(e) => Err(self.failed("reading the ETag of", &key, &e)),
        }
    }

    /// Writes `body` to `rel` only if it is still as `expect` says; a lost race is
    /// [`DeployError::LostRace`] naming `version`.
    pub async fn put_if(
        &self,
        rel: &str,
        body: Vec<u8>,
        expect: &Expect,
        version: &str,
    ) -> Result<(), DeployError> {
        let key = self.bucket.key(rel);
        let request = self
            .client
            .put_object()
            .bucket(&self.bucket.name)
            .key(&key)
            .content_type("application/json")
            .body(ByteStream::from(body));
        let request = match expect {
            Expect::Absent => request.if_none_match("*"),
            Expect::ETag(etag) => request.if_match(etag),
        };
        match request.send().await {
            Ok(_) => Ok(()),
            // 412: the precondition failed; 409: a concurrent conditional write won (AWS).
            Err(e) if matches!(status(&e), Some(412 | 409)) || is_precondition(&e) => {
                Err(DeployError::LostRace {
                    bucket: format!("s3://{}", self.bucket.name),
                    key,
                    expected: expect.to_string(),
                    version: version.to_string(),
                })
            }
            Err(e) if may_have_committed(&e) => Err(DeployError::MayHaveCommitted {
                object: format!("s3://{}/{key} at {}", self.bucket.name, self.endpoint),
                answer: answer(&e).unwrap_or_else(|| "no answer".to_string()),
                message: DisplayErrorContext(&e).to_string(),
                version: version.to_string(),
            }),
            Err(e) => Err(self.failed("writing", &key, &e)),
        }
    }
}

/// Whether a conditional write that failed with `err` may still have been applied: the store
/// answered with a 5xx (`SlowDown` is a 503), or the request went out and no answer came.
fn may_have_committed<E>(err: &SdkError<E>) -> bool {
    match err {
        SdkError::TimeoutError(_) | SdkError::ResponseError(_) => true,
        SdkError::DispatchFailure(failure) => failure.is_io() || failure.is_timeout(),
        _ => status(err).is_some_and(|s| s >= 500),
    }
}

/// The store's answer to a failed request: `HTTP <status>` and the S3 error code, when it
/// answered.
fn answer<E: ProvideErrorMetadata>(err: &SdkError<E>) -> Option<String> {
    let status = status(err)?;
    let code = err
        .as_service_error()
        .and_then(|e| e.code())
        .map(|c| format!(" {c}"))
        .unwrap_or_default();
    Some(format!("HTTP {status}{code}"))
}

fn status<E>(err: &SdkError<E>) -> Option<u16> {
    err.raw_response().map(|r| r.status().as_u16())
}

fn is_precondition<E: ProvideErrorMetadata>(err: &SdkError<E>) -> bool {
    err.as_service_error()
        .and_then(|e| e.code())
        .is_some_and(|code| code == "PreconditionFailed" || code == "ConditionalRequestConflict")
}

#[cfg(test)]
mod tests;
