//! Pointing a fleet's bucket back at a version it served before, with the compare-and-swap
//! writes `kubectl celld rollback` makes: the fleet pointer is read with its ETag, the script's
//! pointer written, then the fleet pointer, only if it has not changed since it was read and
//! only while it names the version expected (when one is). A pointer another writer moved is
//! left alone.

use crate::buckets::object_store::StoreSource;
use crate::buckets::store_errors::describe;
use celld_api::ResolvedStorage;
use celld_api::contract::{DeployPointer, FLEET_POINTER, POINTER_MAX_BYTES, script_pointer};
use object_store::path::Path;
use object_store::{GetOptions, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

/// What pointing back found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointBack {
    /// The fleet pointer was written.
    Written,
    /// The fleet pointer already named the version.
    Already,
    /// The fleet pointer names another version (or none) than the one expected: left alone.
    Moved(Option<String>),
}

impl StoreSource {
    /// Points `storage`'s fleet pointer at `version` of `script` if it names `expected` now
    /// (any version, without one).
    pub async fn point_back(
        &self,
        storage: &ResolvedStorage,
        expected: Option<&str>,
        script: &str,
        version: &str,
    ) -> Result<PointBack, String> {
        let fleet_path = Path::from(storage.bucket.key(FLEET_POINTER));
        let url = storage.bucket.object_url(FLEET_POINTER);
        let found = match self
            .store
            .get_opts(&fleet_path, GetOptions::default())
            .await
        {
            Ok(found) => found,
            Err(object_store::Error::NotFound { .. }) => return Ok(PointBack::Moved(None)),
            Err(e) => return Err(format!("reading {url}: {}", describe(&e))),
        };
        let (e_tag, object_version) = (found.meta.e_tag.clone(), found.meta.version.clone());
        if found.meta.size > POINTER_MAX_BYTES {
            return Err(format!("{url} is larger than a deployment pointer"));
        }
        let body = found
            .bytes()
            .await
            .map_err(|e| format!("reading {url}: {}", describe(&e)))?;
        let live = DeployPointer::parse(&body)
            .map_err(|e| format!("{url} is not a celld deployment pointer: {e}"))?;
        if live.version == version {
            return Ok(PointBack::Already);
        }
        if expected.is_some_and(|expected| live.version != expected) {
            return Ok(PointBack::Moved(Some(live.version)));
        }
        let pointer = DeployPointer::to(script, version).body();
        let script_key = script_pointer(script);
        let script_path = Path::from(storage.bucket.key(&script_key));
        let script_mode = match self.store.head(&script_path).await {
            Ok(meta) => PutMode::Update(UpdateVersion {
                e_tag: meta.e_tag,
                version: meta.version,
            }),
            Err(object_store::Error::NotFound { .. }) => PutMode::Create,
            Err(e) => {
                return Err(format!(
                    "reading {}: {}",
                    storage.bucket.object_url(&script_key),
                    describe(&e)
                ));
            }
        };
        self.store
            .put_opts(
                &script_path,
                PutPayload::from(pointer.clone()),
                PutOptions::from(script_mode),
            )
            .await
            .map_err(|e| {
                format!(
                    "writing {} (compare-and-swap): {}",
                    storage.bucket.object_url(&script_key),
                    describe(&e)
                )
            })?;
        let fleet_mode = PutMode::Update(UpdateVersion {
            e_tag,
            version: object_version,
        });
        match self
            .store
            .put_opts(
                &fleet_path,
                PutPayload::from(pointer),
                PutOptions::from(fleet_mode),
            )
            .await
        {
            Ok(_) => Ok(PointBack::Written),
            Err(object_store::Error::Precondition { .. }) => Ok(PointBack::Moved(None)),
            Err(e) => Err(format!(
                "writing {url} (compare-and-swap): {}",
                describe(&e)
            )),
        }
    }
}
