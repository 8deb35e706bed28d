//! A preview's bucket prefix, which the operator empties at the preview's end: claimed when the
//! preview's fleet is made, with a marker object holding the preview's UID, and emptied only
//! while that marker still holds it. A prefix another preview claimed (or a preview created
//! again under the same name) is never emptied for this one.

use crate::buckets::object_store::StoreSource;
use crate::buckets::pointer::PointerSource;
use crate::buckets::store_errors::describe;
use celld_api::ResolvedStorage;
use object_store::path::Path;
use object_store::{PutMode, PutOptions, PutPayload};
use serde::{Deserialize, Serialize};

/// The marker's key under the prefix: outside celld's reserved prefixes.
pub const MARKER: &str = ".celld-preview";

/// The most of a marker the operator reads.
const MARKER_MAX_BYTES: u64 = 4096;

/// What the marker holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// The UID of the preview that claimed the prefix.
    pub uid: String,
    /// Its namespace and name, for people reading the bucket.
    pub preview: String,
}

/// Who holds a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// No marker: nobody claimed it.
    Nobody,
    /// The marker holds this preview's UID.
    This,
    /// The marker holds another's: what it says.
    Another(String),
}

fn marker_path(storage: &ResolvedStorage) -> Result<Path, String> {
    let prefix = storage.bucket.prefix.trim_matches('/');
    if prefix.is_empty() {
        return Err(format!(
            "{} is a whole bucket, not a prefix a preview can claim",
            storage.bucket
        ));
    }
    Ok(Path::from(storage.bucket.key(MARKER)))
}

impl StoreSource {
    /// Who holds `storage`'s prefix, judged against the preview `uid`.
    pub async fn prefix_holder(
        &self,
        storage: &ResolvedStorage,
        uid: &str,
    ) -> Result<Holder, String> {
        marker_path(storage)?;
        let url = storage.bucket.object_url(MARKER);
        let Some(body) = self
            .object(storage, MARKER, MARKER_MAX_BYTES)
            .await
            .map_err(|e| format!("reading {url}: {e}"))?
        else {
            return Ok(Holder::Nobody);
        };
        Ok(match serde_json::from_slice::<Marker>(&body) {
            Ok(marker) if marker.uid == uid => Holder::This,
            Ok(marker) => {
                Holder::Another(format!("preview {} (UID {})", marker.preview, marker.uid))
            }
            Err(_) => Holder::Another(format!("{url}, which is not a preview's marker")),
        })
    }

    /// Claims `storage`'s prefix for `marker`'s preview: writes the marker unless one exists
    /// (a conditional create), and says who holds the prefix then.
    pub async fn claim_prefix(
        &self,
        storage: &ResolvedStorage,
        marker: &Marker,
    ) -> Result<Holder, String> {
        let path = marker_path(storage)?;
        let body = serde_json::to_vec(marker).map_err(|e| e.to_string())?;
        let create = PutOptions::from(PutMode::Create);
        match self
            .store
            .put_opts(&path, PutPayload::from(body), create)
            .await
        {
            Ok(_) => Ok(Holder::This),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => self.prefix_holder(storage, &marker.uid).await,
            Err(e) => Err(format!(
                "writing {}/{MARKER}: {}",
                storage.bucket,
                describe(&e)
            )),
        }
    }

    /// Whether `storage`'s bucket prefix holds no object.
    pub async fn prefix_is_empty(&self, storage: &ResolvedStorage) -> Result<bool, String> {
        use futures::StreamExt;
        let prefix = storage.bucket.prefix.trim_matches('/');
        match self.store.list(Some(&Path::from(prefix))).next().await {
            None => Ok(true),
            Some(Ok(_)) => Ok(false),
            Some(Err(e)) => Err(format!("listing {}: {}", storage.bucket, describe(&e))),
        }
    }

    /// Deletes every object under `storage`'s bucket prefix (whole path segments: a prefix
    /// `a/pr-1` never touches `a/pr-12/...`), and nothing else: each listed key is checked to
    /// lie under the prefix before it is deleted. The marker goes last, so an erasure that
    /// fails part-way is taken up again by the next call (which lists only what is left) under
    /// the same claim. Returns how many objects were deleted. Unbounded in time: each request
    /// is bounded by the client's timeout.
    pub async fn erase_prefix(&self, storage: &ResolvedStorage) -> Result<u64, String> {
        use futures::{StreamExt, TryStreamExt};
        let marker = marker_path(storage)?;
        let prefix = storage.bucket.prefix.trim_matches('/').to_string();
        let under = format!("{prefix}/");
        let keys: Vec<Path> = self
            .store
            .list(Some(&Path::from(prefix.as_str())))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .map_err(|e| format!("listing {}: {}", storage.bucket, describe(&e)))?;
        if let Some(outside) = keys.iter().find(|k| !k.as_ref().starts_with(&under)) {
            return Err(format!(
                "listing {} returned {outside}, outside the prefix: nothing was deleted",
                storage.bucket
            ));
        }
        let count = keys.len() as u64;
        let (last, first): (Vec<Path>, Vec<Path>) = keys.into_iter().partition(|k| *k == marker);
        for batch in [first, last] {
            let paths = futures::stream::iter(batch.into_iter().map(Ok)).boxed();
            let mut deletes = self.store.delete_stream(paths);
            while let Some(deleted) = deletes.next().await {
                match deleted {
                    // Gone already: a previous erasure, or the store's own lifecycle, got to it.
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => {
                        return Err(format!(
                            "deleting under {}: {}",
                            storage.bucket,
                            describe(&e)
                        ));
                    }
                }
            }
        }
        Ok(count)
    }
}
