//! Ingress `<fleet>` (when spec.ingress.ingressClass is set): host, path, TLS and, for
//! stripPrefix, ingress-nginx's regex rewrite.

use super::{Desired, SERVICE_PORT};
use celld_api::{IngressSpec, PathType};
use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressRule,
    IngressServiceBackend, IngressSpec as K8sIngressSpec, IngressTLS, ServiceBackendPort,
};

const CLUSTER_ISSUER: &str = "cert-manager.io/cluster-issuer";
const REWRITE_TARGET: &str = "nginx.ingress.kubernetes.io/rewrite-target";
const USE_REGEX: &str = "nginx.ingress.kubernetes.io/use-regex";

/// The Ingress of a fleet, when its spec asks for one.
pub fn build(d: &Desired) -> Option<Ingress> {
    let ingress = d.fleet.spec.ingress.as_ref()?;
    let class = ingress.ingress_class.clone()?;
    let mut annotations = ingress.annotations.clone();
    let (path, path_type) = if ingress.strip_prefix {
        annotations.insert(REWRITE_TARGET.into(), "/$2".into());
        annotations.insert(USE_REGEX.into(), "true".into());
        (
            format!("{}(/|$)(.*)", ingress.path),
            "ImplementationSpecific",
        )
    } else {
        (ingress.path.clone(), path_type(ingress.path_type))
    };
    let tls = ingress.tls.as_ref().map(|tls| {
        if let Some(issuer) = &tls.cluster_issuer {
            annotations.insert(CLUSTER_ISSUER.into(), issuer.clone());
        }
        vec![IngressTLS {
            hosts: Some(vec![ingress.hostname.clone()]),
            secret_name: Some(tls_secret(d, ingress)),
        }]
    });
    Some(Ingress {
        metadata: d.meta(d.name.clone(), Some(annotations)),
        spec: Some(K8sIngressSpec {
            ingress_class_name: Some(class),
            rules: Some(vec![IngressRule {
                host: Some(ingress.hostname.clone()),
                http: Some(HTTPIngressRuleValue {
                    paths: vec![HTTPIngressPath {
                        path: Some(path),
                        path_type: path_type.into(),
                        backend: IngressBackend {
                            service: Some(IngressServiceBackend {
                                name: d.name.clone(),
                                port: Some(ServiceBackendPort {
                                    number: Some(SERVICE_PORT),
                                    ..ServiceBackendPort::default()
                                }),
                            }),
                            ..IngressBackend::default()
                        },
                    }],
                }),
            }]),
            tls,
            ..K8sIngressSpec::default()
        }),
        status: None,
    })
}

fn path_type(p: PathType) -> &'static str {
    match p {
        PathType::Prefix => "Prefix",
        PathType::Exact => "Exact",
        PathType::ImplementationSpecific => "ImplementationSpecific",
    }
}

/// The TLS Secret: the user's, or `<fleet>-tls` that cert-manager fills.
fn tls_secret(d: &Desired, ingress: &IngressSpec) -> String {
    ingress
        .tls
        .as_ref()
        .and_then(|t| t.secret_name.clone())
        .unwrap_or_else(|| format!("{}-tls", d.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures;

    #[test]
    fn strip_prefix_with_cluster_issuer() {
        let fleet = fixtures::fleet(fixtures::FULL);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }

    #[test]
    fn none_without_ingress_class() {
        let fleet = fixtures::fleet(fixtures::GATEWAY);
        assert!(build(&fixtures::desired(&fleet)).is_none());
        let fleet = fixtures::fleet(fixtures::MINIMAL);
        assert!(build(&fixtures::desired(&fleet)).is_none());
    }
}
