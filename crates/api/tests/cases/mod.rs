//! Accepted and refused CelldFleet / CelldObjectStore / CelldPreview examples, shared by the client-side rule
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

mod autoscaling;
mod containers;
mod metadata;
mod names;
mod object_storage;
pub mod previews;
pub mod rollouts;
mod routing;
mod scheduling;
mod sizes;
mod source;
pub mod stores;
pub mod updates;
mod versions;

/// Every fleet case: the ones below and those of each field family.
pub fn fleets() -> Vec<Case> {
    let families = [
        FLEETS,
        object_storage::CASES,
        routing::CASES,
        scheduling::CASES,
        containers::CASES,
        metadata::CASES,
        names::CASES,
        versions::CASES,
        source::CASES,
        autoscaling::CASES,
        previews::CASES,
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
