//! The deployment pointer: `deploy/current.json` under the fleet's bucket prefix, read with the
//! fleet's own connection and credentials through a [`PointerSource`]
//! ([`crate::buckets::object_store`] on every store).

use async_trait::async_trait;
use celld_api::contract::DeployPointer;
use celld_api::{DeploymentStatus, ResolvedStorage};
use futures::FutureExt;
use std::any::Any;
use std::panic::AssertUnwindSafe;
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
            adopted: None,
            observed_deployed_at: None,
            version: p.version,
            script_name: p.script_name,
            rollout_percent: p.rollout.and_then(|r| r.percent),
        }),
        Err(e) => Pointer::Unknown(format!(
            "{POINTER_KEY} is not a celld deployment pointer: {e}"
        )),
    }
}

/// What a read of the pointer found.
#[derive(Debug)]
pub enum PointerRead {
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

/// What the operator needs of a bucket: its pointer, read only if its ETag changed, and the
/// manifest of the version it names.
#[async_trait]
pub trait PointerSource: Send + Sync {
    /// Reads the pointer of `storage`; with `etag`, only if it changed since. Unbounded in
    /// time: [`read`] bounds it.
    async fn read(&self, storage: &ResolvedStorage, etag: Option<&str>) -> PointerRead;

    /// Reads the object `key` under `storage`'s prefix, when it is at most `limit` bytes: its
    /// body, or None when it does not exist; the error says why it could not be read (or that
    /// it is bigger). Unbounded in time.
    async fn object(
        &self,
        storage: &ResolvedStorage,
        key: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, String>;
}

/// Reads the pointer of `storage` from `source`; with `etag`, only if it changed since. The
/// whole read, body included, takes at most `timeout`. A client that panics (object-store
/// clients unwrap what they did not expect) fails this read only, never the operator.
pub async fn read(
    source: &dyn PointerSource,
    storage: &ResolvedStorage,
    etag: Option<&str>,
    timeout: Duration,
) -> PointerRead {
    let unknown = |why: String| PointerRead::Changed {
        pointer: Pointer::Unknown(format!(
            "reading {} {why}",
            storage.bucket.object_url(POINTER_KEY)
        )),
        etag: None,
    };
    let guarded = AssertUnwindSafe(source.read(storage, etag)).catch_unwind();
    match tokio::time::timeout(timeout, guarded).await {
        Ok(Ok(read)) => read,
        Ok(Err(panic)) => unknown(format!(
            "failed in the object-store client ({}): check the connection's endpoint and the credentials Secret's values",
            panic_message(panic.as_ref())
        )),
        Err(_) => unknown(format!("took longer than {timeout:?}")),
    }
}

/// What a panic caught from an object-store client said.
pub fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message")
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
                adopted: None,
                observed_deployed_at: None,
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

    struct Panicking;

    #[async_trait]
    impl PointerSource for Panicking {
        async fn read(&self, _: &ResolvedStorage, _: Option<&str>) -> PointerRead {
            panic!("called `Result::unwrap()` on an `Err` value: InvalidIpv4Address")
        }

        async fn object(
            &self,
            _: &ResolvedStorage,
            _: &str,
            _: u64,
        ) -> Result<Option<Vec<u8>>, String> {
            panic!("called `Result::unwrap()` on an `Err` value: InvalidIpv4Address")
        }
    }

    #[tokio::test]
    async fn a_client_that_panics_fails_the_read_only() {
        let storage = ResolvedStorage {
            store: None,
            bucket: celld_api::BucketUrl::parse("s3://b/web").unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: None,
        };
        let read = read(&Panicking, &storage, None, Duration::from_secs(5)).await;
        let PointerRead::Changed {
            pointer: Pointer::Unknown(why),
            etag: None,
        } = read
        else {
            panic!("not an unknown pointer: {read:?}")
        };
        assert_eq!(
            why,
            "reading s3://b/web/deploy/current.json failed in the object-store client (called `Result::unwrap()` on an `Err` value: InvalidIpv4Address): check the connection's endpoint and the credentials Secret's values"
        );
    }

    #[test]
    fn garbage_is_unknown_not_missing() {
        assert!(matches!(parse(b"not json"), Pointer::Unknown(_)));
    }
}
