//! Fleets for the builders' snapshot tests.

use super::Desired;
use celld_api::{CelldFleet, resolve};

/// A fleet parsed from YAML (defaults as the API server applies them come from serde).
pub fn fleet(yaml: &str) -> CelldFleet {
    let mut fleet: CelldFleet = serde_yaml::from_str(yaml).expect("fixture parses");
    fleet.metadata.namespace = Some("apps".into());
    fleet.metadata.uid = Some("0b1c2d3e-0000-4000-8000-000000000001".into());
    fleet
}

/// The desired state of `fleet` as the reconciler would compute it.
pub fn desired(fleet: &CelldFleet) -> Desired<'_> {
    let storage = resolve::resolve(&fleet.spec, "apps", None).expect("fixture resolves");
    Desired {
        fleet,
        name: fleet.metadata.name.clone().expect("fixture has a name"),
        namespace: "apps".into(),
        storage,
        config_hash: "cafe0123".into(),
        replicas: fleet.spec.replicas,
        https: fleet.spec.ingress.as_ref().is_some_and(|i| i.tls.is_some()),
        operator: super::OperatorPods::default(),
        upgrade: crate::upgrade::decide::decide(
            &fleet.spec,
            fleet.spec.replicas,
            None,
            &crate::upgrade::decide::Probed::default(),
        ),
    }
}

/// A fleet with every option set.
pub const FULL: &str = r#"
apiVersion: platform.celld.dev/v1alpha1
kind: CelldFleet
metadata: {name: shop}
spec:
  replicas: 3
  image: ghcr.io/denoland/celld:v0.4.0
  objectStorage:
    bucket: s3://company-celld/shop
    endpoint: https://s3.example.com
    region: eu-west-1
    credentialsSecretRef: {name: shop-s3}
  localStorage: {type: Persistent, size: 20Gi, storageClassName: fast, whenDeleted: Delete}
  service: {type: LoadBalancer, annotations: {lb.example.com/internal: "true"}}
  ingress:
    hostname: shop.example.com
    ingressClass: nginx
    path: /api
    stripPrefix: true
    tls: {clusterIssuer: letsencrypt-prod}
    annotations: {nginx.ingress.kubernetes.io/proxy-body-size: 8m}
  durability: bucket
  resources: {requests: {cpu: 500m, memory: 512Mi}, limits: {memory: 1Gi}}
  env: [{name: RUST_LOG, value: debug}, {name: CELLD_SHUTDOWN_TOTAL_MS, value: "60000"}]
  nodeSelector: {kubernetes.io/os: linux}
  tolerations: [{key: dedicated, operator: Equal, value: celld, effect: NoSchedule}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {platform.celld.dev/fleet: shop}}}
  podAnnotations: {prometheus.io/scrape: "false"}
  podLabels: {team: edge}
  serviceAccountName: shop
  imagePullSecrets: [{name: regcred}]
"#;

/// The smallest fleet: defaults everywhere, an inline connection, no route.
pub const MINIMAL: &str = r#"
apiVersion: platform.celld.dev/v1alpha1
kind: CelldFleet
metadata: {name: local}
spec:
  objectStorage: {bucket: "s3://celld/local", credentialsSecretRef: {name: creds}}
"#;

/// A fleet behind a Gateway, mounted on a subpath with the prefix stripped.
pub const GATEWAY: &str = r#"
apiVersion: platform.celld.dev/v1alpha1
kind: CelldFleet
metadata: {name: local-gw}
spec:
  replicas: 2
  objectStorage: {bucket: "s3://celld/gw", endpoint: "http://minio.celld-poc.svc:9000", allowHTTP: true, credentialsSecretRef: {name: creds}}
  ingress:
    hostname: gw.celld.dev
    gatewayRefs: [{name: celld}, {name: shared, namespace: infra, sectionName: http}]
    path: /api
    stripPrefix: true
"#;
