//! Which optional APIs the cluster serves.

use kube::Client;
use kube::core::GroupVersionKind;
use kube::discovery::pinned_kind;

/// Whether the cluster serves gateway.networking.k8s.io/v1 HTTPRoute.
pub async fn http_route_served(client: &Client) -> bool {
    let gvk = GroupVersionKind::gvk("gateway.networking.k8s.io", "v1", "HTTPRoute");
    pinned_kind(client, &gvk).await.is_ok()
}
