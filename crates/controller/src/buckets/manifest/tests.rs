use super::*;
use crate::buckets::pointer;
use async_trait::async_trait;
use celld_api::reasons::Reason;

/// A bucket whose every object read answers the same.
enum Bucket {
    Body(&'static str),
    Missing,
    Refused,
    Hangs,
    Panics,
}

#[async_trait]
impl PointerSource for Bucket {
    async fn read(&self, _: &ResolvedStorage, _: Option<&str>) -> pointer::PointerRead {
        unreachable!("only manifests are read here")
    }

    async fn object(
        &self,
        _: &ResolvedStorage,
        _: &str,
        _: u64,
    ) -> Result<Option<Vec<u8>>, String> {
        match self {
            Self::Body(body) => Ok(Some(body.as_bytes().to_vec())),
            Self::Missing => Ok(None),
            Self::Refused => Err("Server returned non-2xx status code: 403 Forbidden".into()),
            Self::Hangs => std::future::pending().await,
            Self::Panics => panic!("called `Option::unwrap()` on a `None` value"),
        }
    }
}

fn storage() -> ResolvedStorage {
    crate::buckets::storage_fixture::s3("s3://b/web")
}

const KEY: &str = "deploy/hello/00000000000000c1/manifest.json";
const URL: &str = "s3://b/web/deploy/hello/00000000000000c1/manifest.json";

async fn read_from(bucket: Bucket) -> ManifestRead {
    read(&bucket, &storage(), KEY, Duration::from_millis(50)).await
}

fn judged(read: &ManifestRead, image: &str) -> Vec<Failure> {
    failures("hello", "00000000000000c1", read, image)
}

fn manifest(features: &[&str]) -> ManifestRead {
    Ok(Some(Manifest {
        required_features: features.iter().map(|f| f.to_string()).collect(),
    }))
}

#[tokio::test]
async fn a_manifest_is_read_and_anything_else_is_unreadable() {
    assert_eq!(
        read_from(Bucket::Body(
            r#"{"required_features":["containers-v1"],"modules":[]}"#
        ))
        .await,
        manifest(&["containers-v1"])
    );
    assert_eq!(read_from(Bucket::Missing).await, Ok(None));
    let Err(Unreadable::Invalid { url, .. }) = read_from(Bucket::Body("<Error/>")).await else {
        panic!("garbage is not a manifest")
    };
    assert_eq!(url, URL);
    assert_eq!(
        read_from(Bucket::Refused).await.unwrap_err().to_string(),
        format!(
            "reading {URL} failed (Server returned non-2xx status code: 403 Forbidden), so the features that version requires are unknown; it is read again at the next resync"
        )
    );
    assert!(matches!(
        read_from(Bucket::Hangs).await,
        Err(Unreadable::TimedOut { .. })
    ));
    assert!(matches!(
        read_from(Bucket::Panics).await,
        Err(Unreadable::Panicked { panic, .. }) if panic.contains("unwrap()")
    ));
}

#[test]
fn containers_are_unsupported_on_every_version_and_named() {
    let found = judged(
        &manifest(&["containers-v1"]),
        "ghcr.io/denoland/celld:v0.6.1",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].reason, Reason::FeatureUnsupported);
    assert_eq!(found[0].subject, "feature containers-v1");
    assert!(
        found[0].message.starts_with(
            "the deployed version 00000000000000c1 of Worker hello requires feature containers-v1 (the Worker has containers), which needs a container engine"
        ),
        "{}",
        found[0].message
    );
    assert_eq!(found[0].fingerprint, found[0].message);
}

#[test]
fn a_feature_newer_than_the_image_names_the_version_and_the_release() {
    let found = judged(
        &manifest(&["containers-v1"]),
        "ghcr.io/denoland/celld:v0.5.1",
    );
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].message.starts_with(
            "the deployed version 00000000000000c1 of Worker hello requires feature containers-v1, which celld serves from v0.6.0 on, and spec.image runs v0.5.1"
        ),
        "{}",
        found[0].message
    );
    // An unknown version is judged on containers alone.
    let found = judged(
        &manifest(&["containers-v1"]),
        "ghcr.io/denoland/celld:latest",
    );
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn nothing_required_or_no_manifest_is_no_failure() {
    let image = "ghcr.io/denoland/celld:v0.4.0";
    assert!(judged(&manifest(&[]), image).is_empty());
    assert!(judged(&Ok(None), image).is_empty());
}

#[test]
fn an_unreadable_manifest_is_one_failure_whatever_the_answer() {
    let image = "ghcr.io/denoland/celld:v0.6.1";
    let refused = Err(Unreadable::Failed {
        url: URL.into(),
        why: "403 Forbidden".into(),
    });
    let slow = Err(Unreadable::TimedOut {
        url: URL.into(),
        timeout: Duration::from_secs(5),
    });
    let a = &judged(&refused, image)[0];
    let b = &judged(&slow, image)[0];
    assert_eq!(a.reason, Reason::ManifestUnreadable);
    assert_eq!(a.fingerprint, b.fingerprint);
    assert!(a.message.contains(URL), "{}", a.message);
}
