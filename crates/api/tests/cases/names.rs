//! Cases of the names and routes a fleet hands to its children: ServiceAccount, StorageClass,
//! IngressClass, Secret, Gateway names, hostnames and paths.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "names-everything",
        fleet!(
            "names-everything",
            r#"
  serviceAccountName: celld.edge-1
  localStorage: {type: Persistent, storageClassName: fast-ssd.example.com}
  ingress:
    hostname: 0day.example.com
    ingressClass: nginx-internal
    path: /api/v1/caf%C3%A9/a.b/..c
    tls: {secretName: app-example-com-tls}
"#
        ),
    ),
    ok(
        "gateway-names",
        fleet!(
            "gateway-names",
            "  ingress: {hostname: gw.example.com, gatewayRefs: [{name: public.gw, namespace: infra-1, sectionName: https.tls}]}\n"
        ),
    ),
    bad(
        "service-account-not-dns",
        fleet!("service-account", "  serviceAccountName: 日本\n"),
        "spec.serviceAccountName must be the name of a ServiceAccount",
    ),
    bad(
        "storage-class-uppercase",
        fleet!(
            "storage-class",
            "  localStorage: {type: Persistent, storageClassName: UPPER}\n"
        ),
        "spec.localStorage.storageClassName must be the name of a StorageClass",
    ),
    bad(
        "ingress-class-control-character",
        fleet!(
            "ingress-class",
            "  ingress: {hostname: app.example.com, ingressClass: \"ngi\\anx\"}\n"
        ),
        "spec.ingress.ingressClass must be the name of an IngressClass",
    ),
    bad(
        "tls-secret-underscore",
        fleet!(
            "tls-secret",
            "  ingress: {hostname: app.example.com, ingressClass: nginx, tls: {secretName: Bad_Secret}}\n"
        ),
        "spec.ingress.tls.secretName must be the name of a Secret",
    ),
    bad(
        "tls-issuer-uppercase",
        fleet!(
            "tls-issuer",
            "  ingress: {hostname: app.example.com, ingressClass: nginx, tls: {clusterIssuer: LetsEncrypt}}\n"
        ),
        "spec.ingress.tls.clusterIssuer must be the name of a cert-manager ClusterIssuer",
    ),
    bad(
        "hostname-ip-address",
        fleet!(
            "hostname-ip",
            "  ingress: {hostname: 127.0.0.1, ingressClass: nginx}\n"
        ),
        "spec.ingress.hostname must be a DNS name, not an IP address",
    ),
    bad(
        "path-dot-dot-segment",
        fleet!(
            "path-dot-dot",
            "  ingress: {hostname: app.example.com, ingressClass: nginx, path: /a/../b}\n"
        ),
        "spec.ingress.path may not contain // or . or .. segments",
    ),
    bad(
        "path-trailing-dot",
        fleet!(
            "path-dot",
            "  ingress: {hostname: app.example.com, gatewayRefs: [{name: gw}], path: /a/.}\n"
        ),
        "spec.ingress.path may not contain // or . or .. segments",
    ),
    bad(
        "path-double-slash",
        fleet!(
            "path-double-slash",
            "  ingress: {hostname: app.example.com, ingressClass: nginx, path: //api}\n"
        ),
        "spec.ingress.path may not contain // or . or .. segments",
    ),
    bad(
        "path-encoded-slash",
        fleet!(
            "path-encoded-slash",
            "  ingress: {hostname: app.example.com, ingressClass: nginx, path: /a%2fb}\n"
        ),
        "spec.ingress.path may not contain // or . or .. segments",
    ),
    bad(
        "path-bare-percent",
        fleet!(
            "path-percent",
            "  ingress: {hostname: app.example.com, gatewayRefs: [{name: gw}], path: /100%}\n"
        ),
        "spec.ingress.path may not contain // or . or .. segments",
    ),
    bad(
        "gateway-namespace-underscore",
        fleet!(
            "gateway-namespace",
            "  ingress: {hostname: app.example.com, gatewayRefs: [{name: gw, namespace: Bad_NS}]}\n"
        ),
        "spec.ingress.gatewayRefs[*].namespace must be the name of a namespace",
    ),
    bad(
        "gateway-section-with-space",
        fleet!(
            "gateway-section",
            "  ingress: {hostname: app.example.com, gatewayRefs: [{name: gw, sectionName: Bad Section}]}\n"
        ),
        "spec.ingress.gatewayRefs[*].sectionName must be the name of a listener",
    ),
    bad(
        "gateway-name-uppercase",
        fleet!(
            "gateway-name",
            "  ingress: {hostname: app.example.com, gatewayRefs: [{name: Public}]}\n"
        ),
        "spec.ingress.gatewayRefs[*].name must be the name of a Gateway",
    ),
    bad(
        "store-ref-uppercase",
        r#"
metadata: {name: store-ref-name}
spec:
  storeRef: {name: MinIO}
  objectStorage: {bucket: "s3://celld/app"}
"#,
        "spec.storeRef.name must be the name of a CelldObjectStore",
    ),
    bad(
        "credentials-secret-underscore",
        r#"
metadata: {name: credentials-name}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: s3_creds}}
"#,
        "credentialsSecretRef.name must be the name of a Secret",
    ),
    bad(
        "hostname-label-over-63",
        fleet!(
            "hostname-long-label",
            "  ingress: {hostname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example.com, ingressClass: nginx}\n"
        ),
        "each dot-separated part at most 63 characters",
    ),
    bad(
        "path-encoded-dot-dot",
        fleet!(
            "path-encoded-dots",
            "  ingress: {hostname: app.example.com, ingressClass: nginx, path: /%2e%2e/admin}\n"
        ),
        "spec.ingress.path may not contain // or . or .. segments",
    ),
];
