//! Claiming a preview's bucket prefix before its fleet is made (see
//! [`preview_prefix`](crate::buckets::preview_prefix)), and reaching that prefix again at the
//! preview's end, with the connection of the fleet that wrote it.

use crate::buckets::object_store::StoreSource;
use crate::buckets::preview_prefix::{Holder, Marker};
use crate::buckets::resolve::resolve_storage;
use crate::preview::context::Context;
use crate::shared::own_identity::OwnIdentity;
use celld_api::{CelldFleet, CelldPreview, ResolvedStorage};
use kube::ResourceExt;

/// A client for the bucket of `fleet` (a preview's fleet, live or as rendered), with what it
/// resolved to, or why there is none.
pub async fn reach(
    ctx: &Context,
    ns: &str,
    fleet: &CelldFleet,
) -> Result<(StoreSource, ResolvedStorage), String> {
    let bucket = &fleet.spec.object_storage.bucket;
    let resolved = resolve_storage(
        &ctx.shared.caches,
        &ctx.shared.secrets,
        &ctx.shared.client,
        ns,
        fleet,
    )
    .await
    .map_err(|e| format!("the connection to {bucket} does not resolve: {e}"))?;
    if resolved.secret.is_none() && !ctx.shared.settings.own_identity.allows(ns) {
        return Err(OwnIdentity::refusal(bucket, ns));
    }
    let source = StoreSource::new(
        &resolved.storage,
        resolved.secret.as_deref(),
        &ctx.shared.settings.store_endpoints,
        ctx.shared.settings.s3_timeout,
    )
    .map_err(|e| format!("no client for {bucket}: {e}"))?;
    Ok((source, resolved.storage))
}

/// Claims the prefix of `wanted` (the preview's fleet as rendered) for `preview`: Ok with the
/// bucket URL claimed, or why it is not the preview's (another preview's marker is there, or
/// the bucket could not be reached).
pub async fn claim(
    ctx: &Context,
    preview: &CelldPreview,
    wanted: &CelldFleet,
) -> Result<String, String> {
    let ns = preview.namespace().unwrap_or_default();
    let bucket = wanted.spec.object_storage.bucket.clone();
    let (source, storage) = reach(ctx, &ns, wanted).await?;
    let marker = Marker {
        uid: preview.uid().unwrap_or_default(),
        preview: format!("{ns}/{}", preview.name_any()),
    };
    match source.claim_prefix(&storage, &marker).await {
        Ok(Holder::This) => Ok(bucket),
        Ok(Holder::Another(who)) => Err(format!(
            "{bucket} is claimed by {who}: the operator would empty it when this preview ends, so it makes no fleet here; delete this preview and create it under another name, or empty that prefix if nothing uses it"
        )),
        Ok(Holder::Nobody) => Err(format!("{bucket}: the claim was not written")),
        Err(e) => Err(format!(
            "could not claim {bucket} for the preview (its data is emptied at its end only where the operator claimed it): {e}; retried"
        )),
    }
}
