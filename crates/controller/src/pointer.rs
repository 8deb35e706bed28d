//! The deployment pointer: `deploy/current.json` under the fleet's bucket prefix, read with the
//! fleet's own connection and credentials through a [`PointerSource`]
//! ([`crate::pointer_object_store`] on every store).

use async_trait::async_trait;
use celld_api::contract::DeployPointer;
use celld_api::{DeploymentStatus, ResolvedStorage};
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
