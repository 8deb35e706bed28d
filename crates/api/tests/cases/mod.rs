//! Accepted and refused CelldFleet / CelldObjectStore examples, shared by the client-side rule
//! tests and the tests against the real API server, so both prove the same rules.

/// One example: a manifest and, for a refused one, a piece of the message that must name the
/// field and the fix.
#[derive(Clone)]
pub struct Case {
    pub name: &'static str,
    pub yaml: &'static str,
    pub refused_with: Option<&'static str>,
}

/// A fleet manifest: metadata.name `$name`, an inline object-storage connection, and the spec
/// lines `$spec` (indented by two spaces).
macro_rules! fleet {
    ($name:literal, $spec:literal) => {
        concat!(
            "metadata: {name: ",
            $name,
            "}\nspec:\n  objectStorage: {bucket: \"s3://celld/app\", credentialsSecretRef: {name: creds}}\n",
            $spec
        )
    };
}

mod containers;
mod metadata;
mod names;
mod scheduling;
mod sizes;
pub mod stores;
pub mod updates;

/// Every fleet case: the ones below and those of each field family.
pub fn fleets() -> Vec<Case> {
    let families = [
        FLEETS,
        scheduling::CASES,
        containers::CASES,
        metadata::CASES,
        names::CASES,
    ];
    let mut all: Vec<Case> = families.iter().flat_map(|f| f.iter().cloned()).collect();
    all.extend(sizes::cases());
    all
}

const fn ok(name: &'static str, yaml: &'static str) -> Case {
    Case {
        name,
        yaml,
        refused_with: None,
    }
}

const fn bad(name: &'static str, yaml: &'static str, msg: &'static str) -> Case {
    Case {
        name,
        yaml,
        refused_with: Some(msg),
    }
}

pub const FLEETS: &[Case] = &[
    ok(
        "inline-minimal",
        r#"
metadata: {name: inline-minimal}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
"#,
    ),
    ok(
        "store-ref",
        r#"
metadata: {name: store-ref}
spec:
  storeRef: {name: minio}
  objectStorage: {bucket: "s3://celld/local-poc"}
"#,
    ),
    ok(
        "everything",
        r#"
metadata: {name: everything}
spec:
  replicas: 3
  image: ghcr.io/denoland/celld:v0.4.0
  imagePullPolicy: IfNotPresent
  objectStorage:
    bucket: s3://company-celld/api/v1_x
    endpoint: http://minio.celld-poc.svc:9000
    region: us-east-1
    allowHTTP: true
    credentialsSecretRef: {name: creds}
  localStorage: {type: Persistent, size: 20Gi, storageClassName: fast, whenDeleted: Delete}
  service: {type: LoadBalancer, annotations: {a: b}}
  ingress:
    hostname: example.celld.dev
    ingressClass: nginx
    path: /api
    stripPrefix: true
    tls: {clusterIssuer: letsencrypt-prod}
    annotations: {x: y}
  durability: bucket
  env: [{name: RUST_LOG, value: debug}, {name: CELLD_MAX_RSS_MB, value: "512"}]
  nodeSelector: {kubernetes.io/os: linux}
  tolerations: [{key: dedicated, operator: Equal, value: celld, effect: NoSchedule}]
  podAnnotations: {prometheus.io/scrape: "false"}
  podLabels: {team: edge}
  serviceAccountName: celld
  imagePullSecrets: [{name: regcred}]
"#,
    ),
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
    ok(
        "workload-identity-s3",
        r#"
metadata: {name: irsa}
spec:
  objectStorage: {bucket: "s3://celld/app", region: eu-west-1}
  serviceAccountName: celld
"#,
    ),
    ok(
        "gcs-with-key",
        r#"
metadata: {name: gcs}
spec:
  objectStorage: {bucket: "gs://company_celld/api", credentialsSecretRef: {name: gcs-key}}
"#,
    ),
    ok(
        "gcs-workload-identity",
        r#"
metadata: {name: gcs-wi}
spec:
  objectStorage: {bucket: "gs://company-celld"}
  serviceAccountName: celld
"#,
    ),
    ok(
        "azure-with-key",
        r#"
metadata: {name: azure}
spec:
  objectStorage: {bucket: "az://workers/api", azureStorageAccount: companycelld, credentialsSecretRef: {name: azure-key}}
"#,
    ),
    ok(
        "azure-through-store",
        r#"
metadata: {name: azure-store}
spec:
  storeRef: {name: azure}
  objectStorage: {bucket: "az://workers/api"}
"#,
    ),
    ok(
        "bucket-without-scheme-is-s3",
        r#"
metadata: {name: bucket-scheme}
spec:
  objectStorage: {bucket: "celld/app", credentialsSecretRef: {name: creds}}
"#,
    ),
    bad(
        "gcs-with-endpoint",
        r#"
metadata: {name: gcs-endpoint}
spec:
  objectStorage: {bucket: "gs://celld/app", endpoint: "https://storage.example.com"}
"#,
        "spec.objectStorage.endpoint applies to S3 buckets only: celld refuses it with gs:// and az:// buckets, so remove spec.objectStorage.endpoint",
    ),
    bad(
        "azure-with-endpoint",
        r#"
metadata: {name: azure-endpoint}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld, endpoint: "https://blob.example.com"}
"#,
        "spec.objectStorage.endpoint applies to S3 buckets only: celld refuses it with gs:// and az:// buckets, so remove spec.objectStorage.endpoint",
    ),
    bad(
        "gcs-with-region",
        r#"
metadata: {name: gcs-region}
spec:
  objectStorage: {bucket: "gs://celld/app", region: europe-west1}
"#,
        "spec.objectStorage.region applies to S3 buckets only",
    ),
    bad(
        "azure-with-allow-http",
        r#"
metadata: {name: azure-http}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld, allowHTTP: false}
"#,
        "spec.objectStorage.allowHTTP applies to S3 buckets only",
    ),
    bad(
        "azure-with-region",
        r#"
metadata: {name: azure-region}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld, region: westeurope}
"#,
        "spec.objectStorage.region applies to S3 buckets only",
    ),
    bad(
        "gcs-with-allow-http",
        r#"
metadata: {name: gcs-http}
spec:
  objectStorage: {bucket: "gs://celld/app", allowHTTP: true}
"#,
        "spec.objectStorage.allowHTTP applies to S3 buckets only",
    ),
    bad(
        "azure-without-account",
        r#"
metadata: {name: azure-no-account}
spec:
  objectStorage: {bucket: "az://workers/app"}
"#,
        "an az:// bucket needs spec.objectStorage.azureStorageAccount",
    ),
    bad(
        "account-with-s3-bucket",
        r#"
metadata: {name: s3-account}
spec:
  objectStorage: {bucket: "s3://celld/app", azureStorageAccount: companycelld, credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.azureStorageAccount applies to az:// buckets only",
    ),
    bad(
        "store-and-account",
        r#"
metadata: {name: store-account}
spec:
  storeRef: {name: azure}
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld}
"#,
        "spec.storeRef excludes spec.objectStorage.endpoint, region, allowHTTP and azureStorageAccount",
    ),
    bad(
        "azure-account-uppercase",
        r#"
metadata: {name: azure-upper}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: CompanyCelld}
"#,
        "spec.objectStorage.azureStorageAccount must be an Azure storage account name",
    ),
    bad(
        "azure-container-double-dash",
        r#"
metadata: {name: azure-dash}
spec:
  objectStorage: {bucket: "az://work--ers/app", azureStorageAccount: companycelld}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "azure-container-too-long",
        r#"
metadata: {name: azure-long}
spec:
  objectStorage: {bucket: "az://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/app", azureStorageAccount: companycelld}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "gcs-uppercase-name",
        r#"
metadata: {name: gcs-upper}
spec:
  objectStorage: {bucket: "gs://Celld/app"}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "unknown-scheme",
        r#"
metadata: {name: https-bucket}
spec:
  objectStorage: {bucket: "https://celld/app"}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "store-and-inline-credentials",
        r#"
metadata: {name: both}
spec:
  storeRef: {name: minio}
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
"#,
        "spec.storeRef excludes spec.objectStorage.credentialsSecretRef",
    ),
    bad(
        "store-and-endpoint",
        r#"
metadata: {name: store-endpoint}
spec:
  storeRef: {name: minio}
  objectStorage: {bucket: "s3://celld/app", endpoint: "https://s3.example.com"}
"#,
        "spec.storeRef excludes spec.objectStorage.endpoint",
    ),
    bad(
        "store-and-region",
        r#"
metadata: {name: store-region}
spec:
  storeRef: {name: minio}
  objectStorage: {bucket: "s3://celld/app", region: eu-west-1}
"#,
        "spec.storeRef excludes spec.objectStorage.endpoint, region, allowHTTP and azureStorageAccount",
    ),
    bad(
        "bucket-bad-prefix-chars",
        r#"
metadata: {name: bucket-chars}
spec:
  objectStorage: {bucket: "s3://celld/app name", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "bucket-trailing-slash",
        r#"
metadata: {name: bucket-slash}
spec:
  objectStorage: {bucket: "s3://celld/app/", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "bucket-uppercase-name",
        r#"
metadata: {name: bucket-upper}
spec:
  objectStorage: {bucket: "s3://Celld/app", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "endpoint-not-url",
        r#"
metadata: {name: endpoint-url}
spec:
  objectStorage: {bucket: "s3://celld/app", endpoint: "minio:9000", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.endpoint must be an absolute http:// or https:// URL",
    ),
    bad(
        "endpoint-http-without-allow",
        r#"
metadata: {name: endpoint-http}
spec:
  objectStorage: {bucket: "s3://celld/app", endpoint: "http://minio:9000", credentialsSecretRef: {name: creds}}
"#,
        "set spec.objectStorage.allowHTTP: true",
    ),
    bad(
        "endpoint-http-allow-false",
        r#"
metadata: {name: endpoint-http-false}
spec:
  objectStorage: {bucket: "s3://celld/app", endpoint: "http://minio:9000", allowHTTP: false, credentialsSecretRef: {name: creds}}
"#,
        "set spec.objectStorage.allowHTTP: true",
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
    bad(
        "size-not-quantity",
        r#"
metadata: {name: size-bad}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {size: ten-gigs}
"#,
        "spec.localStorage.size must be a positive Kubernetes quantity",
    ),
    bad(
        "class-on-ephemeral",
        r#"
metadata: {name: class-ephemeral}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Ephemeral, storageClassName: fast}
"#,
        "spec.localStorage.storageClassName applies to type Persistent only",
    ),
    bad(
        "reserved-env",
        r#"
metadata: {name: reserved-env}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  env: [{name: RUST_LOG, value: info}, {name: CELLD_BUCKET, value: "s3://other"}]
"#,
        "spec.env may not set CELLD_BUCKET",
    ),
    bad(
        "owned-pod-label",
        r#"
metadata: {name: owned-label}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  podLabels: {platform.celld.dev/fleet: other}
"#,
        "spec.podLabels may not use keys under platform.celld.dev/",
    ),
    bad(
        "name-too-long",
        r#"
metadata: {name: a-fleet-name-that-is-far-too-long-for-a-statefulset-x}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
"#,
        "at most 52 characters",
    ),
];
