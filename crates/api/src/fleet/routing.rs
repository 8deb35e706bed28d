//! How a fleet is reached: its public Service and an optional Ingress or Gateway API HTTPRoute.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The public Service in front of the nodes.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// Service type: ClusterIP (default), NodePort or LoadBalancer.
    #[serde(default, rename = "type")]
    pub type_: ServiceType,

    /// Annotations on the public Service (load-balancer settings, for example). At most 64,
    /// keys are qualified names, and keys and values total at most 261120 bytes (the 256 KiB
    /// Kubernetes allows, less 1 KiB for the operator's own).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(transform = crate::rules::metadata::annotation_map_bounds)]
    #[x_kube(validation = crate::rules::metadata::annotation_keys_rule("spec.service.annotations"))]
    #[x_kube(validation = crate::rules::metadata::annotations_size_rule("spec.service.annotations"))]
    pub annotations: BTreeMap<String, String>,
}

/// Type of the public Service.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub enum ServiceType {
    /// Reachable inside the cluster only.
    #[default]
    ClusterIP,
    /// Also on a port of every node.
    NodePort,
    /// Also through a cloud load balancer.
    LoadBalancer,
}

impl ServiceType {
    /// The value as Kubernetes spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClusterIP => "ClusterIP",
            Self::NodePort => "NodePort",
            Self::LoadBalancer => "LoadBalancer",
        }
    }
}

/// Public HTTP routing to the fleet: an Ingress when ingressClass is set, an HTTPRoute attached
/// to Gateways when gatewayRefs is set.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.ingressClass) != (has(self.gatewayRefs) && size(self.gatewayRefs) > 0)").message("spec.ingress: set exactly one of ingressClass (the operator creates an Ingress) or gatewayRefs (the operator creates a Gateway API HTTPRoute)"))]
#[x_kube(validation = Rule::new("!self.stripPrefix || self.path != '/'").message("spec.ingress.stripPrefix needs spec.ingress.path other than /: with path / there is no prefix to strip"))]
#[x_kube(validation = Rule::new("!self.stripPrefix || self.pathType == 'Prefix'").message("spec.ingress.stripPrefix needs spec.ingress.pathType Prefix"))]
#[x_kube(validation = Rule::new("!has(self.tls) || has(self.ingressClass)").message("spec.ingress.tls applies to an Ingress (ingressClass) only: with gatewayRefs, terminate TLS on the Gateway's HTTPS listener and select it with sectionName"))]
#[x_kube(validation = Rule::new("self.pathType != 'ImplementationSpecific' || has(self.ingressClass)").message("spec.ingress.pathType ImplementationSpecific applies to an Ingress only: use Prefix or Exact with gatewayRefs"))]
pub struct IngressSpec {
    /// Host name clients use, for example app.example.com (a DNS name, not an IP address;
    /// *.example.com is allowed).
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = Rule::new(r"self.matches('^(\\*\\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$')").message("spec.ingress.hostname must be a lowercase DNS name such as app.example.com, without scheme, port or path, each dot-separated part at most 63 characters"))]
    #[x_kube(validation = Rule::new("!self.matches('^[0-9]+([.][0-9]+){3}$')").message("spec.ingress.hostname must be a DNS name, not an IP address: Ingress and HTTPRoute hosts cannot be IPs; omit spec.ingress to reach the fleet through its Service"))]
    pub hostname: String,

    /// URL path the Worker is mounted on, starting with / (default /), for example /api. No
    /// `.` or `..` segments, no `//`, and `%` only as a %XX escape of a character other than `.`
    /// and `/`.
    #[serde(default = "default_path")]
    #[schemars(length(min = 1, max = 1024))]
    #[x_kube(validation = Rule::new("!self.contains('//') && !self.contains('/./') && !self.contains('/../') && !self.endsWith('/.') && !self.endsWith('/..') && !self.matches('%($|.$|[^0-9A-Fa-f]|.[^0-9A-Fa-f])') && !self.matches('%2[eEfF]')").message("spec.ingress.path may not contain // or . or .. segments (such as /a/../b), nor % other than a %XX escape of a character other than . and /: write the path the clients use, for example /api/v1"))]
    #[x_kube(validation = Rule::new(r"self.matches('^/[A-Za-z0-9._~%!$&()*+,;=:@/-]*$') && (self == '/' || !self.endsWith('/'))").message("spec.ingress.path must start with /, contain only URL path characters and not end with / (for example /api)"))]
    pub path: String,

    /// How path matches: Prefix (default; /api matches /api and /api/...), Exact, or
    /// ImplementationSpecific (Ingress only).
    #[serde(default)]
    pub path_type: PathType,

    /// Remove path before the request reaches the Worker, so /api/hello arrives as /hello.
    /// Needs a path other than / and pathType Prefix. With an Ingress this uses ingress-nginx's
    /// regex rewrite; with an HTTPRoute a URLRewrite filter.
    #[serde(default)]
    pub strip_prefix: bool,

    /// IngressClass of the Ingress to create (nginx, for example), a DNS subdomain. Excludes
    /// gatewayRefs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.ingress.ingressClass", "an IngressClass", "nginx"))]
    pub ingress_class: Option<String>,

    /// Gateways the HTTPRoute attaches to. Excludes ingressClass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub gateway_refs: Vec<GatewayRef>,

    /// TLS for the Ingress: a cert-manager ClusterIssuer or an existing Secret, exactly one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<IngressTls>,

    /// Annotations on the Ingress or HTTPRoute. At most 64, keys are qualified names, and keys
    /// and values total at most 261120 bytes (the 256 KiB Kubernetes allows, less 1 KiB for the
    /// operator's own).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(transform = crate::rules::metadata::annotation_map_bounds)]
    #[x_kube(validation = crate::rules::metadata::annotation_keys_rule("spec.ingress.annotations"))]
    #[x_kube(validation = crate::rules::metadata::annotations_size_rule("spec.ingress.annotations"))]
    pub annotations: BTreeMap<String, String>,
}

fn default_path() -> String {
    "/".to_string()
}

/// How an Ingress or HTTPRoute path matches.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub enum PathType {
    /// The path and everything below it.
    #[default]
    Prefix,
    /// The path only.
    Exact,
    /// As the ingress controller defines it (Ingress only).
    ImplementationSpecific,
}

/// A Gateway an HTTPRoute attaches to.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GatewayRef {
    /// Name of the Gateway, a DNS subdomain.
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.ingress.gatewayRefs[*].name", "a Gateway", "public-gateway"))]
    pub name: String,

    /// Namespace of the Gateway, a DNS label; defaults to the fleet's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    #[x_kube(validation = crate::rules::names::dns_label_rule("spec.ingress.gatewayRefs[*].namespace", "a namespace", "infra"))]
    pub namespace: Option<String>,

    /// Listener of the Gateway to attach to, as Gateway API names listeners (a DNS subdomain);
    /// omit for every listener that allows the route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.ingress.gatewayRefs[*].sectionName", "a listener of the Gateway", "https"))]
    pub section_name: Option<String>,
}

/// TLS of an Ingress: exactly one of clusterIssuer or secretName.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.clusterIssuer) != has(self.secretName)").message("spec.ingress.tls: set exactly one of clusterIssuer (cert-manager issues the certificate) or secretName (an existing TLS Secret)"))]
pub struct IngressTls {
    /// cert-manager ClusterIssuer that issues the certificate into the Secret <fleet>-tls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.ingress.tls.clusterIssuer", "a cert-manager ClusterIssuer", "letsencrypt-prod"))]
    pub cluster_issuer: Option<String>,

    /// An existing kubernetes.io/tls Secret in the fleet's namespace, by name (a DNS
    /// subdomain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.ingress.tls.secretName", "a Secret in the fleet's namespace", "app-example-com-tls"))]
    pub secret_name: Option<String>,
}
