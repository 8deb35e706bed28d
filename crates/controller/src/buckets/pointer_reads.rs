//! Reads of each fleet's deployment pointer, remembered: a reconcile soon after the last read
//! reuses it, and a later one asks the bucket with the pointer's ETag (If-None-Match), so an
//! unchanged pointer costs one small conditional request and no body.

use crate::buckets::pointer::{self, Pointer, PointerRead, PointerSource};
use celld_api::ResolvedStorage;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A reconcile within this long of the last read of the same pointer reuses it (reconciles
/// come in bursts while a fleet's children settle), unless the settings ask for quicker checks.
pub const REUSE_FOR: Duration = Duration::from_secs(5);

/// The last read of one fleet's pointer.
#[derive(Debug, Clone)]
struct LastRead {
    /// Where it was read: bucket, key and endpoint.
    location: String,
    /// What the fleet's annotations were: a change (such as the plugin's deploy annotation)
    /// asks for a read now.
    annotations: u64,
    /// The ETag of the pointer read, if it exists.
    etag: Option<String>,
    pointer: Pointer,
    at: Instant,
}

/// The last pointer read of every fleet, by fleet uid.
pub struct PointerReads {
    reuse_for: Duration,
    timeout: Duration,
    last: Mutex<HashMap<String, LastRead>>,
}

/// Where `storage`'s pointer is.
fn location(storage: &ResolvedStorage) -> String {
    format!(
        "{}|{}|{}",
        storage.endpoint.as_deref().unwrap_or(""),
        storage.azure_storage_account.as_deref().unwrap_or(""),
        storage.bucket.object_url(pointer::POINTER_KEY)
    )
}

/// What a reconcile should do about the pointer.
#[derive(Debug, PartialEq)]
enum Plan {
    /// Use what was read.
    Reuse(Pointer),
    /// Ask the bucket, conditionally on the ETag of the pointer last read (with that pointer)
    /// when there is one.
    Read(Option<(String, Pointer)>),
}

impl PointerReads {
    /// No reads yet; a read is reused for [`REUSE_FOR`], or half of `check_every` (how often a
    /// fleet waiting for its first deployment is checked) when that is shorter, and takes at
    /// most `timeout`.
    pub fn new(check_every: Duration, timeout: Duration) -> Self {
        Self {
            reuse_for: REUSE_FOR.min(check_every / 2),
            timeout,
            last: Mutex::new(HashMap::new()),
        }
    }

    fn plan(&self, uid: &str, location: &str, annotations: u64, now: Instant) -> Plan {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match last.get(uid) {
            Some(l) if l.location == location && l.annotations == annotations => {
                if now.saturating_duration_since(l.at) < self.reuse_for {
                    Plan::Reuse(l.pointer.clone())
                } else {
                    Plan::Read(l.etag.clone().map(|e| (e, l.pointer.clone())))
                }
            }
            _ => Plan::Read(None),
        }
    }

    fn record(&self, uid: &str, read: LastRead) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.insert(uid.to_string(), read);
    }

    /// The pointer of fleet `uid` (with annotations hashing to `annotations`) in `storage`,
    /// read from `source` unless just read.
    pub async fn pointer(
        &self,
        uid: &str,
        annotations: u64,
        source: &dyn PointerSource,
        storage: &ResolvedStorage,
    ) -> Pointer {
        let location = location(storage);
        let now = Instant::now();
        let basis = match self.plan(uid, &location, annotations, now) {
            Plan::Reuse(pointer) => return pointer,
            Plan::Read(basis) => basis,
        };
        let etag = basis.as_ref().map(|(etag, _)| etag.as_str());
        let (pointer, etag) = match (
            pointer::read(source, storage, etag, self.timeout).await,
            basis,
        ) {
            (PointerRead::Changed { pointer, etag }, _) => (pointer, etag),
            (PointerRead::NotModified, Some((etag, pointer))) => (pointer, Some(etag)),
            (PointerRead::NotModified, None) => (
                Pointer::Unknown(format!(
                    "{} answered 304 Not Modified to a read without If-None-Match",
                    storage.bucket.object_url(pointer::POINTER_KEY)
                )),
                None,
            ),
        };
        if !matches!(pointer, Pointer::Unknown(_) | Pointer::NoCredentials(_)) {
            self.record(
                uid,
                LastRead {
                    location,
                    annotations,
                    etag,
                    pointer: pointer.clone(),
                    at: now,
                },
            );
        }
        pointer
    }

    /// The version fleet `uid`'s pointer named when last read, if it named one.
    pub fn deployed_version(&self, uid: &str) -> Option<String> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match &last.get(uid)?.pointer {
            Pointer::Deployed(deployment) => Some(deployment.version.clone()),
            _ => None,
        }
    }

    /// Forgets the fleets whose uid `live` does not keep.
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        crate::map_retain::retain(&mut last, |uid, _| live(uid));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::DeploymentStatus;

    fn deployed(v: &str) -> Pointer {
        Pointer::Deployed(DeploymentStatus {
            adopted: None,
            observed_deployed_at: None,
            version: v.into(),
            script_name: None,
            rollout_percent: None,
        })
    }

    fn read(pointer: Pointer, etag: &str, at: Instant) -> LastRead {
        LastRead {
            location: "loc".into(),
            annotations: 7,
            etag: Some(etag.into()),
            pointer,
            at,
        }
    }

    #[test]
    fn a_fresh_read_is_reused_then_asked_again_with_its_etag() {
        let reads = PointerReads::new(Duration::from_secs(15), Duration::from_secs(5));
        let t = Instant::now();
        assert_eq!(reads.plan("u", "loc", 7, t), Plan::Read(None));
        reads.record("u", read(deployed("v1"), "\"e1\"", t));
        assert_eq!(
            reads.plan("u", "loc", 7, t + Duration::from_secs(1)),
            Plan::Reuse(deployed("v1"))
        );
        assert_eq!(
            reads.plan("u", "loc", 7, t + REUSE_FOR),
            Plan::Read(Some(("\"e1\"".into(), deployed("v1"))))
        );
    }

    #[test]
    fn a_new_annotation_or_location_reads_at_once_without_etag() {
        let reads = PointerReads::new(Duration::from_secs(15), Duration::from_secs(5));
        let t = Instant::now();
        reads.record("u", read(deployed("v1"), "\"e1\"", t));
        assert_eq!(reads.plan("u", "loc", 8, t), Plan::Read(None));
        assert_eq!(reads.plan("u", "moved", 7, t), Plan::Read(None));
        reads.retain(|_| false);
        assert_eq!(reads.plan("u", "loc", 7, t), Plan::Read(None));
    }
}
