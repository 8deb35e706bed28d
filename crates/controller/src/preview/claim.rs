//! Claiming a preview's bucket prefix before its fleet is made (see
//! [`preview_prefix`](crate::buckets::preview_prefix)), and reaching that prefix again at the
//! preview's end, with the connection of the fleet that wrote it.

use crate::buckets::preview_prefix::{Holder, Marker};
use crate::preview::context::Context;
use crate::shared::bucket_access::reach;
use celld_api::{CelldFleet, CelldPreview};
use kube::ResourceExt;

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
    let (source, storage) = reach(&ctx.shared, &ns, wanted).await?;
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
