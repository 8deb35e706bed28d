//! The `CelldObjectStore` resource: an S3-compatible connection shared by the fleets of a
//! namespace.

use crate::fleet::SecretRef;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// An S3-compatible object-storage connection that fleets in the same namespace reference with
/// spec.storeRef. Changing it, or the contents of its Secret, rolls every fleet that uses it.
// printcolumn attributes repeat keys by design.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[kube(
    group = "platform.celld.dev",
    version = "v1alpha1",
    kind = "CelldObjectStore",
    namespaced,
    status = "CelldObjectStoreStatus",
    shortname = "cos",
    category = "celld",
    doc = "An S3-compatible object-storage connection (endpoint, region, credentials Secret) shared by the CelldFleets of a namespace.",
    cel,
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#,
        description = "Whether the credentials Secret resolves"
    ),
    printcolumn(
        name = "Endpoint",
        type_ = "string",
        json_path = ".spec.endpoint",
        description = "S3-compatible endpoint"
    ),
    printcolumn(
        name = "Region",
        type_ = "string",
        json_path = ".spec.region",
        description = "Region"
    ),
    printcolumn(
        name = "Fleets",
        type_ = "integer",
        json_path = ".status.fleetCount",
        description = "Fleets using this store"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = crate::validate::allow_http_rule("spec"))]
#[serde(rename_all = "camelCase")]
pub struct CelldObjectStoreSpec {
    /// S3-compatible endpoint URL, for example http://minio.storage.svc:9000 or
    /// https://ACCOUNT.r2.cloudflarestorage.com. Omit for AWS S3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    #[x_kube(validation = crate::validate::endpoint_rule("spec.endpoint"))]
    pub endpoint: Option<String>,

    /// Region of the buckets (celld's default is us-east-1; use auto for R2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = crate::validate::region_rule("spec.region"))]
    pub region: Option<String>,

    /// Allow a plain-text http:// endpoint.
    #[serde(default, rename = "allowHTTP", skip_serializing_if = "Option::is_none")]
    pub allow_http: Option<bool>,

    /// Secret in this namespace with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optionally
    /// AWS_SESSION_TOKEN.
    pub credentials_secret_ref: SecretRef,
}

/// Observed state of a CelldObjectStore.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CelldObjectStoreStatus {
    /// The metadata.generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// Fleets in this namespace that reference the store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fleets: Vec<String>,

    /// How many fleets reference the store.
    #[serde(default)]
    pub fleet_count: i32,

    /// Ready: whether the credentials Secret exists with the required keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}
