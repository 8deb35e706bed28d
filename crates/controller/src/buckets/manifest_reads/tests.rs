use super::*;
use crate::buckets::manifest::Unreadable;
use crate::buckets::pointer;
use async_trait::async_trait;
use celld_api::DeploymentStatus;
use celld_api::contract::manifest::Manifest;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A bucket that counts the manifests read, answering with `body` (None: a failed read).
struct Counting {
    body: Option<&'static str>,
    reads: AtomicUsize,
}

impl Counting {
    fn new(body: Option<&'static str>) -> Self {
        Self {
            body,
            reads: AtomicUsize::new(0),
        }
    }

    fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl PointerSource for Counting {
    async fn read(&self, _: &ResolvedStorage, _: Option<&str>) -> pointer::PointerRead {
        unreachable!("only manifests are read here")
    }

    async fn object(
        &self,
        _: &ResolvedStorage,
        _: &str,
        _: u64,
    ) -> Result<Option<Vec<u8>>, String> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.body
            .map(|b| Some(b.as_bytes().to_vec()))
            .ok_or_else(|| "connection refused".to_string())
    }
}

fn storage() -> ResolvedStorage {
    crate::buckets::storage_fixture::s3("s3://b/web")
}

fn deployed(version: &str, script: Option<&str>) -> Pointer {
    Pointer::Deployed(DeploymentStatus {
        version: version.into(),
        script_name: script.map(str::to_string),
        rollout_percent: None,
        ..DeploymentStatus::default()
    })
}

const IMAGE: &str = "ghcr.io/denoland/celld:v0.6.1";
const CONTAINERS: &str = r#"{"required_features":["containers-v1"]}"#;

#[tokio::test]
async fn a_version_is_read_once_and_a_new_version_at_once() {
    let reads = ManifestReads::new(Duration::from_secs(60), Duration::from_secs(1));
    let bucket = Counting::new(Some(CONTAINERS));
    let v1 = deployed("00000000000000c1", Some("hello"));
    for _ in 0..3 {
        let found = reads
            .failures("u", Some(&bucket), &storage(), &v1, IMAGE)
            .await;
        assert_eq!(found.len(), 1, "{found:?}");
    }
    assert_eq!(bucket.reads(), 1);
    let v2 = deployed("00000000000000c2", Some("hello"));
    reads
        .failures("u", Some(&bucket), &storage(), &v2, IMAGE)
        .await;
    assert_eq!(bucket.reads(), 2);
    // Another fleet on the same version reads it for itself.
    reads
        .failures("w", Some(&bucket), &storage(), &v2, IMAGE)
        .await;
    assert_eq!(bucket.reads(), 3);
}

#[tokio::test]
async fn nothing_is_read_without_a_deployed_worker_or_a_client() {
    let reads = ManifestReads::new(Duration::from_secs(60), Duration::from_secs(1));
    let bucket = Counting::new(Some(CONTAINERS));
    for pointer in [
        Pointer::Missing,
        Pointer::Unknown("503".into()),
        Pointer::NoCredentials("none".into()),
        deployed("00000000000000c1", None),
    ] {
        let found = reads
            .failures("u", Some(&bucket), &storage(), &pointer, IMAGE)
            .await;
        assert!(found.is_empty(), "{pointer:?}");
    }
    let v1 = deployed("00000000000000c1", Some("hello"));
    assert!(
        reads
            .failures("u", None, &storage(), &v1, IMAGE)
            .await
            .is_empty()
    );
    assert_eq!(bucket.reads(), 0);
}

#[tokio::test]
async fn a_failed_read_is_reported_and_tried_again_after_the_resync() {
    let bucket = Counting::new(None);
    let v1 = deployed("00000000000000c1", Some("hello"));
    let waiting = ManifestReads::new(Duration::from_secs(60), Duration::from_secs(1));
    for _ in 0..2 {
        let found = waiting
            .failures("u", Some(&bucket), &storage(), &v1, IMAGE)
            .await;
        assert_eq!(
            found[0].reason,
            celld_api::reasons::Reason::ManifestUnreadable
        );
    }
    assert_eq!(bucket.reads(), 1, "not again within the resync");
    let retrying = ManifestReads::new(Duration::ZERO, Duration::from_secs(1));
    for _ in 0..2 {
        retrying
            .failures("u", Some(&bucket), &storage(), &v1, IMAGE)
            .await;
    }
    assert_eq!(bucket.reads(), 3);
}

#[test]
fn only_a_manifest_read_is_kept_past_the_resync_and_a_deleted_fleet_is_forgotten() {
    let reads = ManifestReads::new(Duration::from_secs(60), Duration::from_secs(1));
    let t = Instant::now();
    let later = t + Duration::from_secs(60);
    let failed: ManifestRead = Err(Unreadable::Failed {
        url: "s3://b/m".into(),
        why: "503".into(),
    });
    for (read, kept) in [
        (Ok(Some(Manifest::default())), true),
        (Ok(None), false),
        (failed, false),
    ] {
        reads.record(
            "u",
            LastRead {
                location: "loc".into(),
                read: read.clone(),
                at: t,
            },
        );
        assert_eq!(reads.reuse("u", "loc", t), Some(read.clone()));
        assert_eq!(reads.reuse("u", "loc", later).is_some(), kept, "{read:?}");
        assert_eq!(reads.reuse("u", "moved", t), None);
    }
    reads.retain(|_| false);
    assert_eq!(reads.reuse("u", "loc", t), None);
}
