//! The manifest of each fleet's deployed version, read once per version and remembered until
//! the fleet is gone: a version's manifest never changes. A read that failed, or found no
//! manifest, is tried again by a later reconcile, at most once per resync period.

use crate::buckets::manifest::{self, ManifestRead};
use crate::buckets::pointer::{Pointer, PointerSource};
use crate::failure::Failure;
use celld_api::ResolvedStorage;
use celld_api::contract::manifest::manifest_key;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The last manifest read of one fleet.
#[derive(Debug, Clone)]
struct LastRead {
    /// Where it was read: endpoint, account and the manifest's URL (which names the version).
    location: String,
    read: ManifestRead,
    at: Instant,
}

/// The last manifest read of every fleet, by fleet uid.
pub struct ManifestReads {
    retry_after: Duration,
    timeout: Duration,
    last: Mutex<HashMap<String, LastRead>>,
}

/// Where the manifest `key` of `storage` is.
fn location(storage: &ResolvedStorage, key: &str) -> String {
    format!(
        "{}|{}|{}",
        storage.endpoint.as_deref().unwrap_or(""),
        storage.azure_storage_account.as_deref().unwrap_or(""),
        storage.bucket.object_url(key)
    )
}

impl ManifestReads {
    /// No reads yet; a read that failed or found nothing is tried again after `retry_after`
    /// (the resync period), and each read takes at most `timeout`.
    pub fn new(retry_after: Duration, timeout: Duration) -> Self {
        Self {
            retry_after,
            timeout,
            last: Mutex::new(HashMap::new()),
        }
    }

    /// What fleet `uid` last read at `location`, unless it is to be read again at `now`.
    fn reuse(&self, uid: &str, location: &str, now: Instant) -> Option<ManifestRead> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let l = last.get(uid).filter(|l| l.location == location)?;
        let done = matches!(l.read, Ok(Some(_)));
        (done || now.saturating_duration_since(l.at) < self.retry_after).then(|| l.read.clone())
    }

    fn record(&self, uid: &str, read: LastRead) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.insert(uid.to_string(), read);
    }

    /// What keeps the nodes of fleet `uid`, on `image`, from the version `pointer` names in
    /// `storage`: its manifest, read through `source` unless already read. Nothing is read for
    /// a pointer that is missing, unknown or names no Worker (its manifest's key is then
    /// unknown), or without a client.
    pub async fn failures(
        &self,
        uid: &str,
        source: Option<&dyn PointerSource>,
        storage: &ResolvedStorage,
        pointer: &Pointer,
        image: &str,
    ) -> Vec<Failure> {
        let (Pointer::Deployed(deployed), Some(source)) = (pointer, source) else {
            return Vec::new();
        };
        let Some(script) = deployed.script_name.as_deref() else {
            return Vec::new();
        };
        let key = manifest_key(script, &deployed.version);
        let location = location(storage, &key);
        let now = Instant::now();
        let read = match self.reuse(uid, &location, now) {
            Some(read) => read,
            None => {
                let read = manifest::read(source, storage, &key, self.timeout).await;
                self.record(
                    uid,
                    LastRead {
                        location,
                        read: read.clone(),
                        at: now,
                    },
                );
                read
            }
        };
        manifest::failures(script, &deployed.version, &read, image)
    }

    /// Forgets the fleets whose uid `live` does not keep.
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        crate::map_retain::retain(&mut last, |uid, _| live(uid));
    }
}

#[cfg(test)]
mod tests;
