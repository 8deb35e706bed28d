//! `spec.previews.credentials`: how previews reach their bucket without the fleet's own
//! credentials, which also reach its production prefix.

use crate::fleet::{SecretRef, StoreRef};
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// The previews' own object-storage credentials: exactly one of credentialsSecretRef, storeRef
/// or serviceAccountName. Scope them to spec.previews.bucket, so that a branch's unreviewed
/// Worker cannot write to the fleet's own prefix.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("[has(self.credentialsSecretRef), has(self.storeRef), has(self.serviceAccountName)].filter(x, x).size() == 1").message("spec.previews.credentials: set exactly one of credentialsSecretRef (a Secret with the keys of the fleet's connection), storeRef (a CelldObjectStore) or serviceAccountName (a ServiceAccount whose workload identity reaches the previews' bucket)"))]
pub struct PreviewCredentials {
    /// Secret in this namespace with the keys the fleet's inline connection needs (for S3
    /// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, for GCS GOOGLE_SERVICE_ACCOUNT_KEY, for
    /// Azure AZURE_STORAGE_ACCOUNT_KEY), for example a key that can reach only
    /// spec.previews.bucket. The previews keep the fleet's endpoint, region and storage
    /// account. Not allowed when the fleet uses spec.storeRef: name a storeRef here instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretRef>,

    /// CelldObjectStore in this namespace the previews reach their bucket with (its endpoint,
    /// region and credentials), instead of the fleet's connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_ref: Option<StoreRef>,

    /// ServiceAccount the previews' nodes and deploy Jobs run as, whose workload identity
    /// reaches spec.previews.bucket; the previews then get no credentials Secret and keep the
    /// fleet's endpoint, region and storage account. Not allowed when the fleet uses
    /// spec.storeRef: name a storeRef here instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.previews.credentials.serviceAccountName", "a ServiceAccount in the fleet's namespace", "celld-previews"))]
    pub service_account_name: Option<String>,
}
