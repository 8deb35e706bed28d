//! Cases of how a fleet is reached: an Ingress (hostname, path, TLS, prefix stripping) or a
//! Gateway API HTTPRoute.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "gateway",
        r#"
metadata: {name: gateway}
spec:
  objectStorage: {bucket: "s3://celld/gw", credentialsSecretRef: {name: creds}}
  ingress:
    hostname: gw.celld.dev
    gatewayRefs: [{name: celld, namespace: infra, sectionName: http}]
    path: /api
    stripPrefix: true
"#,
    ),
    ok(
        "wildcard-host-exact-path",
        r#"
metadata: {name: wildcard}
spec:
  objectStorage: {bucket: "s3://celld", credentialsSecretRef: {name: creds}}
  ingress: {hostname: "*.apps.example.com", ingressClass: nginx, path: /hello, pathType: Exact}
"#,
    ),
    bad(
        "hostname-with-scheme",
        r#"
metadata: {name: host-scheme}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: "https://app.example.com", ingressClass: nginx}
"#,
        "spec.ingress.hostname must be a lowercase DNS name",
    ),
    bad(
        "path-without-slash",
        r#"
metadata: {name: path-slash}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com, ingressClass: nginx, path: api}
"#,
        "spec.ingress.path must start with /",
    ),
    bad(
        "strip-prefix-root",
        r#"
metadata: {name: strip-root}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com, ingressClass: nginx, stripPrefix: true}
"#,
        "spec.ingress.stripPrefix needs spec.ingress.path other than /",
    ),
    bad(
        "strip-prefix-exact",
        r#"
metadata: {name: strip-exact}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com, ingressClass: nginx, path: /api, pathType: Exact, stripPrefix: true}
"#,
        "spec.ingress.stripPrefix needs spec.ingress.pathType Prefix",
    ),
    bad(
        "class-and-gateway",
        r#"
metadata: {name: class-gateway}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com, ingressClass: nginx, gatewayRefs: [{name: gw}]}
"#,
        "spec.ingress: set exactly one of ingressClass",
    ),
    bad(
        "neither-class-nor-gateway",
        r#"
metadata: {name: no-class}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com}
"#,
        "spec.ingress: set exactly one of ingressClass",
    ),
    bad(
        "tls-both",
        r#"
metadata: {name: tls-both}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com, ingressClass: nginx, tls: {clusterIssuer: le, secretName: s}}
"#,
        "spec.ingress.tls: set exactly one of clusterIssuer",
    ),
    bad(
        "tls-neither",
        r#"
metadata: {name: tls-neither}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com, ingressClass: nginx, tls: {}}
"#,
        "spec.ingress.tls: set exactly one of clusterIssuer",
    ),
    bad(
        "tls-with-gateway",
        r#"
metadata: {name: tls-gateway}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  ingress: {hostname: app.example.com, gatewayRefs: [{name: gw}], tls: {secretName: s}}
"#,
        "spec.ingress.tls applies to an Ingress",
    ),
];
