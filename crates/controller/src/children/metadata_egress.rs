//! The cloud metadata endpoints a fleet's nodes may not reach, and the identities that need
//! one. A Worker runs untrusted code beside celld: from a metadata endpoint it could take the
//! cloud identity of the node it runs on (an EC2 instance profile, a GCE or AKS node's service
//! account or managed identity), which reaches far beyond the fleet's bucket. The fleet's
//! NetworkPolicy keeps these addresses out of its nodes' egress, unless their own bucket
//! identity is served there.

use celld_api::{ResolvedStorage, Scheme};
use std::collections::BTreeMap;

/// IPv4 metadata endpoints: AWS's instance metadata service, Google Compute Engine's and
/// Azure's (and most other clouds'), at the link-local 169.254.169.254; GKE's metadata server
/// for Workload Identity, which a node redirects 169.254.169.254 to; Alibaba Cloud's. Only
/// these addresses: 169.254.170.23 (EKS Pod Identity's agent) and NodeLocal DNSCache's
/// 169.254.20.10 stay reachable.
pub const BLOCKED_V4: &[&str] = &[
    "169.254.169.254/32",
    "169.254.169.252/32",
    "100.100.100.200/32",
];

/// IPv6 metadata endpoints: AWS's instance metadata service on Nitro instances (EKS Pod
/// Identity's agent, fd00:ec2::23, stays reachable).
pub const BLOCKED_V6: &[&str] = &["fd00:ec2::254/128"];

/// The pod label with which AKS's webhook gives a pod its workload identity's token.
pub const AZURE_WORKLOAD_IDENTITY_LABEL: &str = "azure.workload.identity/use";

/// Whether the nodes' bucket identity comes from a metadata endpoint, so their egress must keep
/// it: a `gs://` bucket without a credentials Secret (GKE Workload Identity is served by GKE's
/// metadata server), and an `az://` one without a Secret or AKS Workload Identity's pod label
/// (a managed identity, served by Azure's instance metadata service). Keys from a Secret need
/// none; neither do IRSA (a projected token exchanged with STS), EKS Pod Identity (its own
/// agent's address) and AKS Workload Identity (a projected token exchanged with Entra ID).
pub fn identity_needs_metadata(
    storage: &ResolvedStorage,
    pod_labels: &BTreeMap<String, String>,
) -> bool {
    if storage.credentials_secret.is_some() {
        return false;
    }
    match storage.bucket.scheme {
        Scheme::S3 => false,
        Scheme::Gcs => true,
        Scheme::Azure => {
            pod_labels
                .get(AZURE_WORKLOAD_IDENTITY_LABEL)
                .map(String::as_str)
                != Some("true")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::BucketUrl;

    fn storage(bucket: &str, secret: Option<&str>) -> ResolvedStorage {
        ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse(bucket).unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: secret.map(Into::into),
        }
    }

    #[test]
    fn only_identities_served_by_a_metadata_endpoint_need_one() {
        let none = BTreeMap::new();
        let aks = BTreeMap::from([(AZURE_WORKLOAD_IDENTITY_LABEL.to_string(), "true".into())]);
        let cases = [
            ("s3://b/p", Some("keys"), &none, false),
            ("s3://b/p", None, &none, false),
            ("gs://b/p", Some("key"), &none, false),
            ("gs://b/p", None, &none, true),
            ("az://c/p", Some("key"), &none, false),
            ("az://c/p", None, &aks, false),
            ("az://c/p", None, &none, true),
        ];
        for (bucket, secret, labels, needs) in cases {
            assert_eq!(
                identity_needs_metadata(&storage(bucket, secret), labels),
                needs,
                "{bucket} secret {secret:?} labels {labels:?}"
            );
        }
    }
}
