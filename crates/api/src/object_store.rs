//! The `CelldObjectStore` resource: an object-storage connection (S3, Google Cloud Storage or
//! Azure Blob Storage) shared by the fleets of a namespace.

use crate::fleet::SecretRef;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// An object-storage connection that fleets in the same namespace reference with spec.storeRef:
/// S3 (endpoint, region), Google Cloud Storage, or Azure Blob Storage (azureStorageAccount), with
/// a credentials Secret or, without one, the nodes' workload identity. Each fleet's bucket URL
/// says which store it uses. Changing the store, or the contents of its Secret, rolls every fleet
/// that uses it.
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
    doc = "An object-storage connection (S3 endpoint and region, or an Azure storage account; a credentials Secret or workload identity) shared by the CelldFleets of a namespace.",
    cel,
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#,
        description = "Whether the credentials Secret resolves, or none is needed"
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
#[x_kube(validation = crate::rules::storage::allow_http_rule("spec"))]
#[x_kube(validation = Rule::new("!has(self.azureStorageAccount) || (!has(self.endpoint) && !has(self.region) && !has(self.allowHTTP))").message("spec.azureStorageAccount makes this an Azure Blob Storage connection, which takes no spec.endpoint, spec.region or spec.allowHTTP (celld allows them for S3 only): remove them, or use a separate store for S3"))]
#[serde(rename_all = "camelCase")]
pub struct CelldObjectStoreSpec {
    /// S3-compatible endpoint URL, for example http://minio.storage.svc:9000 or
    /// https://ACCOUNT.r2.cloudflarestorage.com. Omit for AWS S3. S3 only: a fleet with a gs://
    /// or az:// bucket cannot use a store that sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    #[x_kube(validation = crate::rules::storage::endpoint_rule("spec.endpoint"))]
    pub endpoint: Option<String>,

    /// Region of the buckets (celld's default is us-east-1; use auto for R2). S3 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = crate::rules::storage::region_rule("spec.region"))]
    pub region: Option<String>,

    /// Allow a plain-text http:// endpoint. S3 only.
    #[serde(default, rename = "allowHTTP", skip_serializing_if = "Option::is_none")]
    pub allow_http: Option<bool>,

    /// Azure storage account holding the containers of the az:// buckets of the fleets using
    /// this store (AZURE_STORAGE_ACCOUNT_NAME), 3-24 lowercase letters and digits. Required for
    /// az:// buckets, refused for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 3, max = 24))]
    #[x_kube(validation = crate::rules::storage::azure_account_rule("spec.azureStorageAccount"))]
    pub azure_storage_account: Option<String>,

    /// Secret in this namespace with the credentials the nodes get: for S3 AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY and optionally AWS_SESSION_TOKEN; for GCS GOOGLE_SERVICE_ACCOUNT_KEY
    /// (the service-account key JSON); for Azure AZURE_STORAGE_ACCOUNT_KEY. Omit it for workload
    /// identity: the nodes then get no key at all and use the cloud identity of their fleet's
    /// spec.serviceAccountName.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretRef>,
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

    /// Ready: whether the credentials Secret exists with the required keys (always true
    /// without a Secret); Degraded while its last reconcile failed (the reason and what
    /// failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}
