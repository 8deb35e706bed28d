//! A client for a fleet's bucket, with its credentials from the caches, for the controllers
//! that write to a bucket beside the fleet's own reconcile (a preview's claim and erasure, a
//! rollout's pointers written back).

use crate::buckets::object_store::StoreSource;
use crate::buckets::resolve::resolve_storage;
use crate::shared::context::Shared;
use crate::shared::own_identity::OwnIdentity;
use celld_api::{CelldFleet, ResolvedStorage};

/// A client for the bucket of `fleet` (of namespace `ns`), with what it resolved to, or why
/// there is none.
pub async fn reach(
    shared: &Shared,
    ns: &str,
    fleet: &CelldFleet,
) -> Result<(StoreSource, ResolvedStorage), String> {
    let bucket = &fleet.spec.object_storage.bucket;
    let resolved = resolve_storage(&shared.caches, &shared.secrets, &shared.client, ns, fleet)
        .await
        .map_err(|e| format!("the connection to {bucket} does not resolve: {e}"))?;
    if resolved.secret.is_none() && !shared.settings.own_identity.allows(ns) {
        return Err(OwnIdentity::refusal(bucket, ns));
    }
    let source = StoreSource::new(
        &resolved.storage,
        resolved.secret.as_deref(),
        &shared.settings.store_endpoints,
        shared.settings.s3_timeout,
    )
    .map_err(|e| format!("no client for {bucket}: {e}"))?;
    Ok((source, resolved.storage))
}
