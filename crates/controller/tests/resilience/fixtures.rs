//! Fleets and stores as JSON manifests (those of `celld_fixtures::manifests`), applied as a
//! user would (server-side apply), and deployment pointers in the test bucket.

use crate::sentinels::MANAGER;
use celld_testkit::S3Settings;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Api, Client};
use serde_json::Value;

/// A CelldFleet or CelldObjectStore API of `ns`, for manifests of any shape.
pub fn api(client: &Client, ns: &str, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(celld_api::GROUP, celld_api::VERSION, kind);
    Api::namespaced_with(client.clone(), ns, &ApiResource::from_gvk(&gvk))
}

/// Applies a CelldFleet or CelldObjectStore manifest (server-side apply, forced).
pub async fn apply(
    client: &Client,
    ns: &str,
    manifest: &Value,
) -> Result<DynamicObject, kube::Error> {
    let kind = manifest["kind"].as_str().unwrap_or_default();
    let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
    api(client, ns, kind)
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(manifest),
        )
        .await
}

/// Publishes a deployment pointer for `version` under `prefix` of the test bucket, as
/// `celld deploy` does last.
pub async fn publish_pointer(s3: &S3Settings, prefix: &str, version: &str) {
    celld_fixtures::publish_pointer(s3, prefix, version)
        .await
        .unwrap_or_else(|e| panic!("pointer under {prefix} written to the test S3 server: {e}"));
}
