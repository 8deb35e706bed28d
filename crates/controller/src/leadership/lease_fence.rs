//! Keeps the write fence in step with the leader Lease as the API server records it: while this
//! replica leads, the Lease is watched; each version that shows this replica as the holder
//! moves the fence's deadline to `renewTime + write window`, and one that shows another holder
//! (or none) closes the fence for good. When no renewal arrives in time through the watch (it
//! may be stalled), the Lease is read directly; if that fails too, the fence closes on its own.

use crate::cache::streams::watch_backoff;
use crate::leadership::fence::{Fence, renew_grace, write_window};
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tracing::{debug, warn};

/// Leader election settings.
#[derive(Debug, Clone)]
pub struct Leader {
    /// Namespace of the Lease (the operator's own).
    pub namespace: String,
    /// Name of the Lease.
    pub lease: String,
    /// This replica's identity (its pod name).
    pub identity: String,
    /// Seconds a lease is valid after its last renewal.
    pub duration_seconds: u64,
}

/// What a read of the Lease says about this replica's leadership.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseSeen {
    /// This replica holds it, last renewed at this time.
    Ours(SystemTime),
    /// Another replica holds it (`None`: nobody does).
    Other(Option<String>),
    /// The read failed or the Lease has no renew time: the fence is left to expire.
    Unknown,
}

/// What `lease` says about the replica `identity`.
pub fn judge(lease: &Lease, identity: &str) -> LeaseSeen {
    let Some(spec) = &lease.spec else {
        return LeaseSeen::Other(None);
    };
    match spec.holder_identity.as_deref() {
        Some(holder) if holder == identity => {
            spec.renew_time.as_ref().map_or(LeaseSeen::Unknown, |t| {
                LeaseSeen::Ours(SystemTime::from(t.0))
            })
        }
        Some("") | None => LeaseSeen::Other(None),
        Some(other) => LeaseSeen::Other(Some(other.to_string())),
    }
}

/// Reads the Lease and moves the fence.
pub struct LeaseFence {
    api: Api<Lease>,
    lease: String,
    identity: String,
    window: Duration,
    /// How long to wait for a renewal through the watch before reading the Lease directly:
    /// the renew interval plus a quarter of the grace, still within the write window.
    patience: Duration,
    /// The watch timeout the API server applies.
    watch_timeout: Duration,
    fence: Arc<Fence>,
}

impl LeaseFence {
    /// A keeper of `fence` for `leader`'s Lease.
    pub fn new(
        client: Client,
        leader: &Leader,
        fence: Arc<Fence>,
        watch_timeout: Duration,
    ) -> Self {
        let grace = renew_grace(leader.duration_seconds);
        let renew_every = Duration::from_secs(leader.duration_seconds.saturating_sub(grace));
        Self {
            api: Api::namespaced(client, &leader.namespace),
            lease: leader.lease.clone(),
            identity: leader.identity.clone(),
            window: write_window(leader.duration_seconds, grace),
            patience: (renew_every + Duration::from_secs(grace) / 4)
                .max(Duration::from_millis(100)),
            watch_timeout,
            fence,
        }
    }

    /// Reads the Lease once (giving up after the write window: an answer that late is of no
    /// use) and moves the fence accordingly.
    pub async fn refresh(&self) -> LeaseSeen {
        match tokio::time::timeout(self.window, self.api.get(&self.lease)).await {
            Ok(Ok(lease)) => self.seen(&lease),
            Ok(Err(e)) => {
                debug!(error = %e, lease = %self.lease, "reading the leader Lease failed");
                LeaseSeen::Unknown
            }
            Err(_) => {
                debug!(lease = %self.lease, "reading the leader Lease timed out");
                LeaseSeen::Unknown
            }
        }
    }

    /// What `lease` says, applied to the fence.
    fn seen(&self, lease: &Lease) -> LeaseSeen {
        let seen = judge(lease, &self.identity);
        match &seen {
            LeaseSeen::Ours(renewed) => self.fence.renewed(*renewed, self.window),
            LeaseSeen::Other(holder) => {
                warn!(holder = ?holder, "the leader Lease is no longer ours; writes stop");
                self.fence.lose();
            }
            LeaseSeen::Unknown => {}
        }
        seen
    }

    /// Keeps watching the Lease (reading it when no renewal arrives in time); returns once it
    /// is held by another replica or nobody.
    pub async fn run(self) {
        let timeout = u32::try_from(self.watch_timeout.as_secs()).unwrap_or(u32::MAX);
        let config = watcher::Config::default()
            .fields(&format!("metadata.name={}", self.lease))
            .timeout(timeout.max(1));
        let mut versions = watcher(self.api.clone(), config)
            .backoff(watch_backoff())
            .applied_objects()
            .boxed();
        loop {
            let seen = match tokio::time::timeout(self.patience, versions.next()).await {
                Ok(Some(Ok(lease))) => self.seen(&lease),
                Ok(Some(Err(e))) => {
                    debug!(error = %e, lease = %self.lease, "watching the leader Lease failed");
                    LeaseSeen::Unknown
                }
                Ok(None) => return,
                Err(_) => self.refresh().await,
            };
            if let LeaseSeen::Other(_) = seen {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lease(spec: serde_json::Value) -> Lease {
        serde_json::from_value(json!({"metadata": {"name": "celld-operator"}, "spec": spec}))
            .unwrap()
    }

    #[test]
    fn our_renewal_is_read_from_the_lease() {
        let seen = judge(
            &lease(json!({"holderIdentity": "pod-a", "renewTime": "2026-01-02T03:04:05.250000Z"})),
            "pod-a",
        );
        let expected = SystemTime::UNIX_EPOCH + Duration::from_millis(1_767_323_045_250);
        assert_eq!(seen, LeaseSeen::Ours(expected));
    }

    #[test]
    fn another_holder_or_none_means_lost() {
        let other = lease(json!({"holderIdentity": "pod-b", "renewTime": "2026-01-02T03:04:05Z"}));
        assert_eq!(
            judge(&other, "pod-a"),
            LeaseSeen::Other(Some("pod-b".into()))
        );
        assert_eq!(judge(&lease(json!({})), "pod-a"), LeaseSeen::Other(None));
        assert_eq!(
            judge(&lease(json!({"holderIdentity": ""})), "pod-a"),
            LeaseSeen::Other(None)
        );
    }

    #[test]
    fn ours_without_a_renew_time_says_nothing() {
        let seen = judge(&lease(json!({"holderIdentity": "pod-a"})), "pod-a");
        assert_eq!(seen, LeaseSeen::Unknown);
    }
}
