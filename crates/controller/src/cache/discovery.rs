//! Which optional APIs the cluster serves (and which of the project's own CRDs are installed).

use kube::Client;
use kube::core::GroupVersionKind;
use kube::discovery::pinned_kind;

/// Whether the cluster serves gateway.networking.k8s.io/v1 HTTPRoute.
pub async fn http_route_served(client: &Client) -> bool {
    let gvk = GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "HTTPRoute");
    pinned_kind(client, &gvk).await.is_ok()
}

/// Whether the cluster serves platform.celld.dev/v1alpha1 CelldPreview (its CRD installed).
pub async fn previews_served(client: &Client) -> bool {
    let gvk = GroupVersionKind::gvk(celld_api::GROUP, celld_api::VERSION, "CelldPreview");
    pinned_kind(client, &gvk).await.is_ok()
}

/// Whether the cluster serves platform.celld.dev/v1alpha1 CelldRollout (its CRD installed).
pub async fn rollouts_served(client: &Client) -> bool {
    let gvk = GroupVersionKind::gvk(celld_api::GROUP, celld_api::VERSION, "CelldRollout");
    pinned_kind(client, &gvk).await.is_ok()
}
