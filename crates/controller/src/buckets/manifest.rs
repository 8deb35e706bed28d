//! The manifest of the version a fleet's pointer names (`deploy/<script>/<version>/manifest.json`
//! under its bucket prefix), read through the fleet's bucket client, bounded in time and parsed
//! fail-closed, and what it requires that the fleet's nodes cannot serve, as failures.

use crate::buckets::pointer::{PointerSource, panic_message};
use crate::failure::Failure;
use celld_api::ResolvedStorage;
use celld_api::contract::manifest::Manifest;
use celld_api::contract::version::image_version;
use celld_api::contract::{MANIFEST_MAX_BYTES, features};
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

/// Why the manifest of a deployed version could not be judged, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// The bucket answered with an error, or the connection failed.
    #[error(
        "reading {url} failed ({why}), so the features that version requires are unknown; it is read again at the next resync"
    )]
    Failed {
        /// The manifest's URL.
        url: String,
        /// What the bucket or the connection said.
        why: String,
    },
    /// The read took too long.
    #[error(
        "reading {url} took longer than {timeout:?}, so the features that version requires are unknown; it is read again at the next resync"
    )]
    TimedOut {
        /// The manifest's URL.
        url: String,
        /// The bound.
        timeout: Duration,
    },
    /// The object-store client panicked.
    #[error(
        "reading {url} failed in the object-store client ({panic}), so the features that version requires are unknown: check the connection's endpoint and the credentials Secret's values"
    )]
    Panicked {
        /// The manifest's URL.
        url: String,
        /// What the panic said.
        panic: String,
    },
    /// The object is not a celld manifest.
    #[error(
        "{url} is not a celld manifest ({error}), so the features that version requires are unknown and the nodes cannot adopt it either: deploy the Worker again"
    )]
    Invalid {
        /// The manifest's URL.
        url: String,
        /// Why it does not parse.
        error: String,
    },
}

impl Unreadable {
    /// The URL of the manifest.
    pub fn url(&self) -> &str {
        match self {
            Self::Failed { url, .. }
            | Self::TimedOut { url, .. }
            | Self::Panicked { url, .. }
            | Self::Invalid { url, .. } => url,
        }
    }
}

/// What a read of a manifest found: the manifest, none (no such object), or why it could not
/// be read.
pub type ManifestRead = Result<Option<Manifest>, Unreadable>;

/// Reads the manifest `key` of `storage` from `source`, within `timeout`, body included. A
/// client that panics fails this read only.
pub async fn read(
    source: &dyn PointerSource,
    storage: &ResolvedStorage,
    key: &str,
    timeout: Duration,
) -> ManifestRead {
    let url = storage.bucket.object_url(key);
    let guarded = AssertUnwindSafe(source.object(storage, key, MANIFEST_MAX_BYTES)).catch_unwind();
    let body = match tokio::time::timeout(timeout, guarded).await {
        Ok(Ok(Ok(body))) => body,
        Ok(Ok(Err(why))) => return Err(Unreadable::Failed { url, why }),
        Ok(Err(panic)) => {
            let panic = panic_message(panic.as_ref()).to_string();
            return Err(Unreadable::Panicked { url, panic });
        }
        Err(_) => return Err(Unreadable::TimedOut { url, timeout }),
    };
    body.map(|body| Manifest::parse(&body))
        .transpose()
        .map_err(|e| Unreadable::Invalid {
            url,
            error: e.to_string(),
        })
}

/// What keeps the nodes of a fleet on `image` from `version` of the Worker `script`, as its
/// manifest was `read`: each feature they cannot serve, or a manifest that could not be read.
/// A version without a manifest requires no feature.
pub fn failures(script: &str, version: &str, read: &ManifestRead, image: &str) -> Vec<Failure> {
    let manifest = match read {
        Ok(Some(manifest)) => manifest,
        Ok(None) => return Vec::new(),
        Err(unreadable) => {
            return vec![Failure::manifest_unreadable(
                unreadable.url(),
                &unreadable.to_string(),
            )];
        }
    };
    features::problems(image_version(image).as_ref(), &manifest.required_features)
        .iter()
        .map(|problem| {
            let why = format!("the deployed version {version} of Worker {script} {problem}");
            Failure::feature_unsupported(problem.feature(), &why)
        })
        .collect()
}

#[cfg(test)]
mod tests;
