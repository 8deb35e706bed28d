//! The finalizer that keeps a deleted preview until its fleet is stopped and its bucket prefix
//! emptied. Added and removed with a merge patch that names the resourceVersion it read, so a
//! concurrent change of the finalizers fails (and is retried) rather than being overwritten.
//! Not an apply: a finalizer added by an earlier operator belongs to whoever patched it then,
//! and only a patch of the whole list removes it whatever its owner. The patch goes under its
//! own field manager, [`FINALIZER_MANAGER`], so it never touches the fields the operator's applies own.

use crate::error::Error;
use celld_api::CelldPreview;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;

/// The finalizer's name.
pub const NAME: &str = "platform.celld.dev/preview-data";

/// The field manager of the finalizer's patches.
pub const FINALIZER_MANAGER: &str = "celld-operator-finalizer";

/// Whether `preview` carries the finalizer.
pub fn held(preview: &CelldPreview) -> bool {
    preview.finalizers().iter().any(|f| f == NAME)
}

async fn set(
    api: &Api<CelldPreview>,
    preview: &CelldPreview,
    finalizers: Vec<String>,
) -> Result<(), Error> {
    let name = preview.name_any();
    let patch = json!({
        "metadata": {
            "finalizers": finalizers,
            "resourceVersion": preview.resource_version(),
        }
    });
    let params = PatchParams {
        field_manager: Some(FINALIZER_MANAGER.into()),
        ..PatchParams::default()
    };
    api.patch(&name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::kube(format!("updating the finalizers of CelldPreview {name}"), e))?;
    Ok(())
}

/// Adds the finalizer unless `preview` carries it.
pub async fn hold(api: &Api<CelldPreview>, preview: &CelldPreview) -> Result<(), Error> {
    if held(preview) {
        return Ok(());
    }
    let mut finalizers = preview.finalizers().to_vec();
    finalizers.push(NAME.to_string());
    set(api, preview, finalizers).await
}

/// Removes the finalizer, letting the API server delete `preview`.
pub async fn release(api: &Api<CelldPreview>, preview: &CelldPreview) -> Result<(), Error> {
    if !held(preview) {
        return Ok(());
    }
    let finalizers = preview
        .finalizers()
        .iter()
        .filter(|f| *f != NAME)
        .cloned()
        .collect();
    set(api, preview, finalizers).await
}
