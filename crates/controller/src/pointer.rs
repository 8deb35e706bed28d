//! The deployment pointer: `deploy/current.json` under the fleet's bucket prefix, read with the
//! fleet's own connection and credentials through a [`PointerSource`]: `aws-sdk-s3` for an S3
//! bucket with a credentials Secret (here), `object_store` for the others
//! ([`crate::pointer_object_store`]).

use async_trait::async_trait;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region, timeout::TimeoutConfig};
use aws_sdk_s3::error::SdkError;
use celld_api::contract::DeployPointer;
use celld_api::{DeploymentStatus, ResolvedStorage, labels::secret_keys};
use k8s_openapi::api::core::v1::Secret;
use std::time::Duration;

pub use celld_api::contract::FLEET_POINTER as POINTER_KEY;

/// What the bucket says about the deployed Worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pointer {
    /// A deployment exists.
    Deployed(DeploymentStatus),
    /// No deployment yet: celld nodes would exit at boot.
    Missing,
    /// The bucket could not be read; the message says why.
    Unknown(String),
    /// The fleet names no credentials Secret and the operator's own identity gives it none for
    /// this bucket (none found, or refused); the message says which and what to do.
    NoCredentials(String),
}

/// Parses the pointer JSON celld writes.
pub fn parse(body: &[u8]) -> Pointer {
    match DeployPointer::parse(body) {
        Ok(p) => Pointer::Deployed(DeploymentStatus {
            version: p.version,
            script_name: p.script_name,
            rollout_percent: p.rollout.and_then(|r| r.percent),
        }),
        Err(e) => Pointer::Unknown(format!(
            "{POINTER_KEY} is not a celld deployment pointer: {e}"
        )),
    }
}

fn string(secret: &Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .and_then(|v| String::from_utf8(v.0.clone()).ok())
}

/// An S3 client for `storage` with the credentials in `secret`, each request bounded by
/// `timeout`; the message says why there is none.
pub fn client(
    storage: &ResolvedStorage,
    secret: &Secret,
    timeout: Duration,
) -> Result<aws_sdk_s3::Client, String> {
    let (Some(ak), Some(sk)) = (
        string(secret, secret_keys::ACCESS_KEY_ID),
        string(secret, secret_keys::SECRET_ACCESS_KEY),
    ) else {
        return Err("the credentials Secret's keys are not UTF-8".into());
    };
    let credentials = Credentials::new(
        ak,
        sk,
        string(secret, secret_keys::SESSION_TOKEN),
        None,
        "celld-credentials-secret",
    );
    let mut config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(storage.region.clone()))
        .credentials_provider(credentials)
        .timeout_config(TimeoutConfig::builder().operation_timeout(timeout).build());
    if let Some(endpoint) = &storage.endpoint {
        config = config.endpoint_url(endpoint).force_path_style(true);
    }
    Ok(aws_sdk_s3::Client::from_conf(config.build()))
}

/// What a read of the pointer found.
#[derive(Debug)]
pub enum Read {
    /// The pointer as it is now, with its ETag when it exists.
    Changed {
        /// What the bucket says.
        pointer: Pointer,
        /// The ETag of `deploy/current.json`.
        etag: Option<String>,
    },
    /// The pointer still has the ETag given.
    NotModified,
}

/// What the operator needs of a bucket: its pointer, read only if its ETag changed.
#[async_trait]
pub trait PointerSource: Send + Sync {
    /// Reads the pointer of `storage`; with `etag`, only if it changed since. Unbounded in
    /// time: [`read`] bounds it.
    async fn read(&self, storage: &ResolvedStorage, etag: Option<&str>) -> Read;
}

/// Reads the pointer of `storage` from `source`; with `etag`, only if it changed since. The
/// whole read, body included, takes at most `timeout`.
pub async fn read(
    source: &dyn PointerSource,
    storage: &ResolvedStorage,
    etag: Option<&str>,
    timeout: Duration,
) -> Read {
    match tokio::time::timeout(timeout, source.read(storage, etag)).await {
        Ok(read) => read,
        Err(_) => Read::Changed {
            pointer: Pointer::Unknown(format!(
                "reading {} took longer than {timeout:?}",
                storage.bucket.object_url(POINTER_KEY)
            )),
            etag: None,
        },
    }
}

/// An S3 bucket read with `aws-sdk-s3` and the keys of the fleet's credentials Secret.
pub struct S3Source(pub aws_sdk_s3::Client);

#[async_trait]
impl PointerSource for S3Source {
    async fn read(&self, storage: &ResolvedStorage, etag: Option<&str>) -> Read {
        read_s3(&self.0, storage, etag).await
    }
}

async fn read_s3(
    client: &aws_sdk_s3::Client,
    storage: &ResolvedStorage,
    etag: Option<&str>,
) -> Read {
    let key = storage.bucket.key(POINTER_KEY);
    let result = client
        .get_object()
        .bucket(&storage.bucket.name)
        .key(&key)
        .set_if_none_match(etag.map(str::to_string))
        .send()
        .await;
    let changed = |pointer| Read::Changed {
        pointer,
        etag: None,
    };
    match result {
        Ok(out) => {
            let etag = out.e_tag.clone();
            match out.body.collect().await {
                Ok(bytes) => Read::Changed {
                    pointer: parse(&bytes.into_bytes()),
                    etag,
                },
                Err(e) => changed(Pointer::Unknown(format!(
                    "reading {}: {e}",
                    storage.bucket.object_url(POINTER_KEY)
                ))),
            }
        }
        Err(SdkError::ServiceError(e)) if e.raw().status().as_u16() == 304 => Read::NotModified,
        Err(SdkError::ServiceError(e)) if e.err().is_no_such_key() => changed(Pointer::Missing),
        Err(e) => changed(Pointer::Unknown(format!(
            "reading {} failed: {}",
            storage.bucket.object_url(POINTER_KEY),
            aws_sdk_s3::error::DisplayErrorContext(&e)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_celld_pointer() {
        let body = br#"{"script_name":"hello","version":"0123456789abcdef","prefix":"deploy/hello/0123456789abcdef","rollout":{"percent":100}}"#;
        assert_eq!(
            parse(body),
            Pointer::Deployed(DeploymentStatus {
                version: "0123456789abcdef".into(),
                script_name: Some("hello".into()),
                rollout_percent: Some(100),
            })
        );
    }

    #[test]
    fn script_name_may_be_absent() {
        let body = br#"{"version":"0123456789abcdef","prefix":"deploy/x/0123456789abcdef","rollout":{"percent":100}}"#;
        assert!(matches!(parse(body), Pointer::Deployed(d) if d.script_name.is_none()));
    }

    #[test]
    fn garbage_is_unknown_not_missing() {
        assert!(matches!(parse(b"not json"), Pointer::Unknown(_)));
    }
}
