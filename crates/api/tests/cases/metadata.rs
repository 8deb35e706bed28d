//! Cases of the labels and annotations a fleet puts on its pods, Service, Ingress and HTTPRoute.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "metadata-everything",
        fleet!(
            "metadata-everything",
            r#"
  podLabels: {app.kubernetes.io/part-of: shop, tier: "", v: 1.2_a}
  podAnnotations: {Example.COM/Owner: "team edge <edge@example.com>", note: "日本語 is fine in a value"}
  service: {annotations: {service.beta.kubernetes.io/aws-load-balancer-internal: "true"}}
  ingress:
    hostname: app.example.com
    ingressClass: nginx
    annotations: {nginx.ingress.kubernetes.io/proxy-body-size: 8m}
"#
        ),
    ),
    bad(
        "pod-label-bad-value",
        fleet!("pod-label-value", "  podLabels: {x: \"-bad\"}\n"),
        "spec.podLabels values must be empty or at most 63",
    ),
    bad(
        "pod-label-bad-key",
        fleet!("pod-label-key", "  podLabels: {\"Example.com/x\": y}\n"),
        "spec.podLabels keys must be a qualified name",
    ),
    bad(
        "pod-label-name-too-long",
        fleet!(
            "pod-label-name",
            "  podLabels: {example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: y}\n"
        ),
        "spec.podLabels keys must be a qualified name",
    ),
    bad(
        "pod-annotation-bad-key",
        fleet!("pod-annotation-key", "  podAnnotations: {\"bad key\": x}\n"),
        "spec.podAnnotations keys must be a qualified name",
    ),
    bad(
        "service-annotation-bad-key",
        fleet!(
            "service-annotation-key",
            "  service: {annotations: {\"/no-prefix\": x}}\n"
        ),
        "spec.service.annotations keys must be a qualified name",
    ),
    bad(
        "ingress-annotation-bad-key",
        fleet!(
            "ingress-annotation-key",
            "  ingress: {hostname: app.example.com, ingressClass: nginx, annotations: {\"a..b/c\": x}}\n"
        ),
        "spec.ingress.annotations keys must be a qualified name",
    ),
];
