//! The nodes' pod templates for a set of fleet shapes, compared with the goldens under
//! `golden/pod-templates/`: a change of one restarts the nodes of every such fleet when the
//! operator is upgraded. A golden that changes needs an "Upgrading the operator" line in
//! docs/install.md, recorded next to its hash in `golden/pod-templates/accepted.txt`
//! (`hack/check-pod-templates.py`). `CELLD_UPDATE_GOLDEN=1 cargo test -p celld-operator --lib
//! golden` writes the goldens anew.

use super::fixtures::fleet;
use super::{Desired, OperatorPods, statefulset};
use crate::fleet::config_hash;
use crate::upgrade::decide::{Probed, decide};
use celld_api::{CelldFleet, CelldObjectStore, resolve};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A fleet's connection, without its bucket.
const INLINE: &str =
    "endpoint: https://s3.example.com, region: eu-west-1, credentialsSecretRef: {name: creds}";

/// The shapes: a name, and the spec below `spec:` of a fleet named `web`.
fn shapes() -> Vec<(&'static str, String)> {
    let inline =
        |extra: &str| format!("  objectStorage: {{bucket: \"s3://celld/web\", {INLINE}}}\n{extra}");
    vec![
        ("ephemeral", inline("")),
        (
            "persistent",
            inline("  localStorage: {type: Persistent, size: 20Gi}\n"),
        ),
        (
            "ingress",
            inline(
                "  ingress: {hostname: web.example.com, ingressClass: nginx, tls: {clusterIssuer: letsencrypt}}\n",
            ),
        ),
        (
            "httproute",
            inline("  ingress: {hostname: web.example.com, gatewayRefs: [{name: public}]}\n"),
        ),
        (
            "store",
            "  storeRef: {name: shared}\n  objectStorage: {bucket: \"s3://celld/web\"}\n"
                .to_string(),
        ),
        (
            "workload-identity",
            "  objectStorage: {bucket: \"gs://celld/web\"}\n  serviceAccountName: web\n"
                .to_string(),
        ),
        (
            "celld-0.4",
            inline("  image: ghcr.io/denoland/celld:v0.4.1\n"),
        ),
        (
            "celld-0.5",
            inline("  image: ghcr.io/denoland/celld:v0.5.1\n"),
        ),
        (
            "celld-0.6",
            inline(
                "  image: ghcr.io/denoland/celld:v0.6.2\n  env: [{name: CELLD_MAX_ASSET_FILE_BYTES, value: \"52428800\"}]\n",
            ),
        ),
    ]
}

fn store() -> CelldObjectStore {
    serde_yaml::from_str(
        "apiVersion: platform.celld.dev/v1alpha1\nkind: CelldObjectStore\nmetadata: {name: shared, namespace: apps}\nspec: {endpoint: https://s3.example.com, region: eu-west-1, credentialsSecretRef: {name: shared-creds}}\n",
    )
    .expect("store fixture")
}

fn secret() -> Secret {
    Secret {
        data: Some(BTreeMap::from([
            (
                "AWS_ACCESS_KEY_ID".to_string(),
                ByteString(b"AKIAGOLDEN".to_vec()),
            ),
            (
                "AWS_SECRET_ACCESS_KEY".to_string(),
                ByteString(b"golden".to_vec()),
            ),
        ])),
        ..Secret::default()
    }
}

/// The pod template the operator gives `fleet`'s nodes at rest, as YAML.
fn template(fleet: &CelldFleet) -> String {
    let store = store();
    let storage = resolve::resolve(&fleet.spec, "apps", Some(&store)).expect("shape resolves");
    let secret = storage.credentials_secret.as_ref().map(|_| secret());
    let desired = Desired {
        fleet,
        name: "web".into(),
        namespace: "apps".into(),
        config_hash: config_hash::compute(&storage, secret.as_ref()),
        storage,
        replicas: fleet.spec.replicas,
        https: fleet.spec.ingress.as_ref().is_some_and(|i| i.tls.is_some()),
        operator: OperatorPods::default(),
        upgrade: decide(&fleet.spec, fleet.spec.replicas, None, &Probed::default()),
    };
    let sts = statefulset::build(&desired);
    let template = sts.spec.expect("a StatefulSet spec").template;
    serde_yaml::to_string(&template).expect("YAML")
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden/pod-templates")
}

#[test]
fn the_nodes_pod_templates_match_their_goldens() {
    let update = std::env::var_os("CELLD_UPDATE_GOLDEN").is_some();
    let mut changed = Vec::new();
    for (shape, spec) in shapes() {
        let fleet = fleet(&format!(
            "apiVersion: platform.celld.dev/v1alpha1\nkind: CelldFleet\nmetadata: {{name: web}}\nspec:\n{spec}"
        ));
        let rendered = template(&fleet);
        let path = golden_dir().join(format!("{shape}.yaml"));
        if update {
            std::fs::write(&path, &rendered).expect("golden written");
            continue;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        if golden != rendered {
            changed.push(shape);
        }
    }
    assert!(
        changed.is_empty(),
        "the nodes' pod template of these fleet shapes changed: {changed:?}. Upgrading the operator would restart the nodes of every such fleet. If that is intended, write the goldens anew (CELLD_UPDATE_GOLDEN=1 cargo test -p celld-operator --lib golden), add a line to docs/install.md's 'Upgrading the operator' saying which fleets restart, and record it in golden/pod-templates/accepted.txt (see hack/check-pod-templates.py)"
    );
}
