//! Access to kwok's rule objects (group `kwok.x-k8s.io/v1alpha1`), applied server-side.

use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::{Api, Client};
use serde_json::Value;

use crate::error::{Error, Result};

/// Field manager of the kit's server-side applies.
pub(crate) const FIELD_MANAGER: &str = "celld-testkit";

/// The namespaced API of the kwok kind `kind` (plural `plural`).
pub(crate) fn api(
    client: &Client,
    namespace: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("kwok.x-k8s.io", "v1alpha1", kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, plural);
    Api::namespaced_with(client.clone(), namespace, &resource)
}

/// Creates or replaces `object` (a full manifest with `metadata.name`) by server-side apply.
pub(crate) async fn apply(api: &Api<DynamicObject>, name: &str, object: Value) -> Result<()> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(name, &params, &Patch::Apply(&object))
        .await
        .map_err(|e| Error::kube(format!("applying kwok rule {name}"), e))?;
    Ok(())
}
