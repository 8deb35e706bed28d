//! Object storage (the fleet's long-term authority) and local work storage of a fleet.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// A reference to a CelldObjectStore in the fleet's namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct StoreRef {
    /// Name of the CelldObjectStore.
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.storeRef.name", "a CelldObjectStore in the fleet's namespace", "minio"))]
    pub name: String,
}

/// A reference to a Secret in the same namespace with the object-storage credentials: for S3
/// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optionally AWS_SESSION_TOKEN; for GCS
/// GOOGLE_SERVICE_ACCOUNT_KEY (a service-account key JSON); for Azure AZURE_STORAGE_ACCOUNT_KEY.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SecretRef {
    /// Name of the Secret, a DNS subdomain.
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("credentialsSecretRef.name", "a Secret in the same namespace", "celld-s3-credentials"))]
    pub name: String,
}

/// The bucket prefix a fleet serves from and, when no storeRef is set, how to reach it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = crate::rules::storage::allow_http_rule("spec.objectStorage"))]
#[x_kube(validation = crate::rules::storage::s3_only_rule("spec.objectStorage", "endpoint"))]
#[x_kube(validation = crate::rules::storage::s3_only_rule("spec.objectStorage", "region"))]
#[x_kube(validation = crate::rules::storage::s3_only_rule("spec.objectStorage", "allowHTTP"))]
#[x_kube(validation = Rule::new("!has(self.azureStorageAccount) || self.bucket.startsWith('az://')").message("spec.objectStorage.azureStorageAccount applies to az:// buckets only: remove it, or use an az:// bucket"))]
pub struct ObjectStorage {
    /// Bucket and prefix as [s3://|gs://|az://]NAME[/PREFIX] (no scheme means S3), for example
    /// s3://company-celld/api, gs://company-celld/api or az://celld/api (NAME is the container
    /// for Azure). Each prefix is a separate fleet; fleets may share a bucket with different
    /// prefixes.
    #[schemars(length(min = 1, max = 1024))]
    #[x_kube(validation = crate::rules::storage::bucket_rule("spec.objectStorage.bucket"))]
    pub bucket: String,

    /// S3-compatible endpoint URL, for example https://ACCOUNT.r2.cloudflarestorage.com. Omit
    /// for AWS S3. Switches to path-style addressing. S3 buckets only; not allowed with storeRef.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048))]
    #[x_kube(validation = crate::rules::storage::endpoint_rule("spec.objectStorage.endpoint"))]
    pub endpoint: Option<String>,

    /// Region of the bucket (celld's default is us-east-1; use auto for R2). S3 buckets only;
    /// not allowed with storeRef.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = crate::rules::storage::region_rule("spec.objectStorage.region"))]
    pub region: Option<String>,

    /// Allow a plain-text http:// endpoint (a local MinIO, for example). S3 buckets only; not
    /// allowed with storeRef.
    #[serde(default, rename = "allowHTTP", skip_serializing_if = "Option::is_none")]
    pub allow_http: Option<bool>,

    /// Azure storage account holding the az:// bucket's container (AZURE_STORAGE_ACCOUNT_NAME),
    /// 3-24 lowercase letters and digits. Required for an az:// bucket unless storeRef is set;
    /// az:// buckets only; not allowed with storeRef.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 3, max = 24))]
    #[x_kube(validation = crate::rules::storage::azure_account_rule("spec.objectStorage.azureStorageAccount"))]
    pub azure_storage_account: Option<String>,

    /// Secret with the object-storage credentials the nodes get: for S3 AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY and optionally AWS_SESSION_TOKEN; for GCS
    /// GOOGLE_SERVICE_ACCOUNT_KEY (the service-account key JSON); for Azure
    /// AZURE_STORAGE_ACCOUNT_KEY. Omit it for workload identity: the nodes then get no key at
    /// all and use the cloud identity of spec.serviceAccountName (EKS IRSA or Pod Identity, GKE
    /// Workload Identity, AKS Workload Identity or a managed identity). Not allowed with storeRef.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretRef>,
}

/// Local work storage of each celld node.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = crate::rules::local_storage::type_unchanged_rule())]
#[x_kube(validation = crate::rules::local_storage::persistent_claim_unchanged_rule())]
#[x_kube(validation = Rule::new("!has(self.storageClassName) || self.type == 'Persistent'").message("spec.localStorage.storageClassName applies to type Persistent only: set type: Persistent or remove storageClassName"))]
pub struct LocalStorage {
    /// Ephemeral: an emptyDir limited to size, lost when a pod is deleted. Persistent: one
    /// PersistentVolumeClaim per node, kept across restarts (preserves SQLite working files,
    /// caches and follower replication data).
    #[serde(default, rename = "type")]
    pub type_: LocalStorageType,

    /// Size of each node's work storage (a positive Kubernetes quantity below 2^63 such as 10Gi):
    /// the emptyDir limit or the PVC request.
    #[serde(default = "default_size")]
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = crate::rules::quantity::positive_rule("spec.localStorage.size", "10Gi or 500Mi"))]
    pub size: String,

    /// StorageClass of the PVCs (type Persistent only), a DNS subdomain. Omit for the cluster's
    /// default class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.localStorage.storageClassName", "a StorageClass", "fast-ssd"))]
    pub storage_class_name: Option<String>,

    /// What happens to the PVCs when the fleet is deleted (type Persistent only): Retain keeps
    /// them (and the data) for a fleet of the same name, Delete removes them.
    #[serde(default)]
    pub when_deleted: PvcRetention,
}

impl Default for LocalStorage {
    fn default() -> Self {
        Self {
            type_: LocalStorageType::default(),
            size: default_size(),
            storage_class_name: None,
            when_deleted: PvcRetention::default(),
        }
    }
}

fn default_size() -> String {
    "10Gi".to_string()
}

/// Kind of local work storage.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub enum LocalStorageType {
    /// An emptyDir with a size limit; lost when the pod goes.
    #[default]
    Ephemeral,
    /// A PersistentVolumeClaim per node.
    Persistent,
}

/// Fate of a fleet's PVCs when the fleet is deleted.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub enum PvcRetention {
    /// Keep the PVCs.
    #[default]
    Retain,
    /// Delete the PVCs with the fleet.
    Delete,
}
