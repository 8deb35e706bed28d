//! `spec.previews`: a fleet that lets CelldPreviews copy it, each a short-lived fleet of its own
//! at `<preview>.<baseDomain>`, with its data under the previews bucket.

use crate::fleet::{GatewayRef, PreviewCredentials};
use crate::rules::ttl;
use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::KubeSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Previews of this fleet: CelldPreviews naming it in spec.fleet each get a fleet of their own,
/// a copy of this one (image, env, storage connection, scheduling) with their own host,
/// bucket prefix, size and lifetime.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.ingressClass) != (has(self.gatewayRefs) && size(self.gatewayRefs) > 0)").message("spec.previews: set exactly one of ingressClass (each preview gets an Ingress) or gatewayRefs (each preview gets a Gateway API HTTPRoute)"))]
#[x_kube(validation = Rule::new("!has(self.tls) || has(self.ingressClass)").message("spec.previews.tls applies to Ingresses (ingressClass) only: with gatewayRefs, terminate TLS on the Gateway's HTTPS listener for *.<baseDomain>"))]
#[x_kube(validation = Rule::new("duration(self.ttl) <= duration(self.maxTtl)").message("spec.previews.ttl must not be longer than spec.previews.maxTtl: lower ttl or raise maxTtl"))]
pub struct PreviewPolicy {
    /// DNS domain the previews are served under: preview pr-123 answers at
    /// pr-123.<baseDomain>. Point a wildcard DNS record (*.<baseDomain>) at the ingress
    /// controller or Gateway. Lowercase DNS name of at most 189 characters (a preview's name
    /// and a dot come first, 253 in all).
    #[schemars(length(min = 1, max = 189))]
    #[x_kube(validation = Rule::new(r"self.matches('^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$')").message("spec.previews.baseDomain must be a lowercase DNS name such as preview.example.com, without scheme, port, path or wildcard"))]
    pub base_domain: String,

    /// Bucket URL the previews keep their data under: preview P in namespace N uses
    /// <bucket>/N/P, which the operator empties when the preview expires or is deleted. Reached
    /// with this fleet's connection (its storeRef, or its inline endpoint, region and
    /// credentials), so it has the same scheme as spec.objectStorage.bucket; it is neither this
    /// fleet's own bucket prefix nor under it nor above it. [s3://|gs://|az://]NAME[/PREFIX].
    #[schemars(length(min = 3, max = 512))]
    #[x_kube(validation = crate::rules::storage::bucket_rule("spec.previews.bucket"))]
    pub bucket: String,

    /// IngressClass of the previews' Ingresses (nginx, for example). Excludes gatewayRefs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.previews.ingressClass", "an IngressClass", "nginx"))]
    pub ingress_class: Option<String>,

    /// Gateways the previews' HTTPRoutes attach to. Excludes ingressClass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub gateway_refs: Vec<GatewayRef>,

    /// TLS of the previews' Ingresses: a wildcard certificate for *.<baseDomain> in a Secret of
    /// this namespace (secretName), or a cert-manager ClusterIssuer that issues one certificate
    /// per preview. Without it previews are served over plain HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<PreviewTls>,

    /// How long a preview lives from its creation unless it sets spec.ttl: a duration in hours,
    /// minutes and seconds such as 72h or 1h30m (default 72h).
    #[serde(default = "default_ttl")]
    #[schemars(length(min = 2, max = 32))]
    #[x_kube(validation = ttl::rule("spec.previews.ttl"))]
    pub ttl: String,

    /// The longest spec.ttl a preview may ask for (default 168h, a week).
    #[serde(default = "default_max_ttl")]
    #[schemars(length(min = 2, max = 32))]
    #[x_kube(validation = ttl::rule("spec.previews.maxTtl"))]
    pub max_ttl: String,

    /// Nodes of each preview (default 1).
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 1, max = 10))]
    pub replicas: i32,

    /// CPU and memory of each preview node (default: requests cpu 50m and memory 128Mi, limit
    /// memory 256Mi, small enough for dozens of previews on a small cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::rules::resources::schema)]
    pub resources: Option<ResourceRequirements>,

    /// The previews' own object-storage credentials, scoped to spec.previews.bucket. Without
    /// them previews are refused unless shareCredentials is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<PreviewCredentials>,

    /// Let previews reach their bucket with this fleet's own connection and credentials (or its
    /// ServiceAccount's workload identity). Those also reach the fleet's production prefix, so
    /// a preview's unreviewed Worker could read and overwrite production data. Default false:
    /// set credentials instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub share_credentials: bool,

    /// Let a preview's spec.source choose the image its deploy Job runs (deployerImage, or an
    /// image with layout Deployer). That image runs with the previews' bucket credentials.
    /// Default false: previews are published by the operator's own deployer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_source_deployer: bool,
}

/// TLS of the previews' Ingresses: exactly one of secretName or clusterIssuer.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.clusterIssuer) != has(self.secretName)").message("spec.previews.tls: set exactly one of secretName (a wildcard certificate for *.<baseDomain>) or clusterIssuer (cert-manager issues one per preview)"))]
pub struct PreviewTls {
    /// An existing kubernetes.io/tls Secret in this namespace holding a certificate for
    /// *.<baseDomain>, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.previews.tls.secretName", "a Secret in the fleet's namespace", "preview-wildcard-tls"))]
    pub secret_name: Option<String>,

    /// cert-manager ClusterIssuer that issues each preview's certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.previews.tls.clusterIssuer", "a cert-manager ClusterIssuer", "letsencrypt-prod"))]
    pub cluster_issuer: Option<String>,
}

fn default_ttl() -> String {
    "72h".to_string()
}

fn default_max_ttl() -> String {
    "168h".to_string()
}

fn default_replicas() -> i32 {
    1
}

impl PreviewPolicy {
    /// The host preview `name` answers at.
    pub fn host(&self, name: &str) -> String {
        format!("{name}.{}", self.base_domain)
    }

    /// The URL preview `name` answers at: https when the previews have TLS.
    pub fn url(&self, name: &str) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}/", self.host(name))
    }

    /// The bucket URL of preview `name` in namespace `namespace`: `<bucket>/<namespace>/<name>`.
    pub fn preview_bucket(&self, namespace: &str, name: &str) -> String {
        format!("{}/{namespace}/{name}", self.bucket.trim_end_matches('/'))
    }

    /// The resources of each preview node: spec.previews.resources, or the small default.
    pub fn node_resources(&self) -> ResourceRequirements {
        self.resources.clone().unwrap_or_else(|| {
            let q = |s: &str| Quantity(s.to_string());
            ResourceRequirements {
                requests: Some(BTreeMap::from([
                    ("cpu".to_string(), q("50m")),
                    ("memory".to_string(), q("128Mi")),
                ])),
                limits: Some(BTreeMap::from([("memory".to_string(), q("256Mi"))])),
                ..ResourceRequirements::default()
            }
        })
    }
}

/// Rule on the fleet's spec: the previews bucket has the fleet bucket's scheme and neither
/// holds nor is held by the fleet's own prefix.
pub fn previews_bucket_rule() -> kube::core::Rule {
    // A bucket URL without a scheme is S3, as in celld: compare them written with one.
    let norm = |b: &str| {
        format!(
            "((({b}).startsWith('s3://') || ({b}).startsWith('gs://') || ({b}).startsWith('az://')) ? ({b}) : 's3://' + ({b}))"
        )
    };
    let (fleet, previews) = (
        norm("self.objectStorage.bucket"),
        norm("self.previews.bucket"),
    );
    kube::core::Rule::new(format!(
        "!has(self.previews) || ({fleet}.substring(0, 5) == {previews}.substring(0, 5) \
         && {fleet} != {previews} \
         && !{fleet}.startsWith({previews} + '/') \
         && !{previews}.startsWith({fleet} + '/'))"
    ))
    .message("spec.previews.bucket must use the scheme of spec.objectStorage.bucket (the previews reach it with the fleet's connection) and be apart from the fleet's own prefix: not the same, not under it, not above it (for example s3://celld-previews/web for a fleet on s3://celld/web)")
}

/// Rule on the fleet's spec: previews' own credentialsSecretRef or serviceAccountName goes with
/// an inline connection, whose endpoint, region and storage account the previews keep.
pub fn preview_credentials_rule() -> kube::core::Rule {
    kube::core::Rule::new(
        "!has(self.previews) || !has(self.previews.credentials) || !has(self.storeRef) || (!has(self.previews.credentials.credentialsSecretRef) && !has(self.previews.credentials.serviceAccountName))",
    )
    .message("spec.previews.credentials.credentialsSecretRef and serviceAccountName need the fleet's inline connection, which the previews keep: with spec.storeRef, give the previews a CelldObjectStore of their own (spec.previews.credentials.storeRef)")
}
