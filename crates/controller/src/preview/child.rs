//! The fleet a preview serves from: a copy of its fleet's spec with the preview's host, bucket
//! prefix, size and Worker, named like the preview and owned by it. Pure.

use celld_api::labels::{PREVIEW, PREVIEW_OF};
use celld_api::{
    CelldFleet, CelldFleetSpec, CelldPreview, IngressSpec, IngressTls, LocalStorage, PathType,
    PreviewCredentials, PreviewPolicy, PreviewTls, ServiceSpec,
};
use kube::{Resource, ResourceExt};
use std::collections::BTreeMap;

/// The preview's fleet, as the operator applies it: everything of `parent`'s spec that makes
/// the Worker run the same (image, env, storage connection, scheduling, durability), and what
/// makes it a preview: `policy`'s size, routing and a bucket prefix of its own, ephemeral work
/// storage, the preview's spec.source, and no autoscaling or previews of its own.
pub fn render(parent: &CelldFleet, policy: &PreviewPolicy, preview: &CelldPreview) -> CelldFleet {
    let ns = preview.namespace().unwrap_or_default();
    let name = preview.name_any();
    let mut spec = parent.spec.clone();
    spec.replicas = policy.replicas;
    spec.object_storage.bucket = policy.preview_bucket(&ns, &name);
    spec.resources = Some(Box::new(policy.node_resources()));
    spec.local_storage = LocalStorage::default();
    spec.service = ServiceSpec::default();
    spec.ingress = Some(Box::new(IngressSpec {
        hostname: policy.host(&name),
        path: "/".to_string(),
        path_type: PathType::Prefix,
        strip_prefix: false,
        ingress_class: policy.ingress_class.clone(),
        gateway_refs: policy.gateway_refs.clone(),
        tls: policy.tls.as_ref().map(ingress_tls),
        annotations: BTreeMap::new(),
    }));
    if let Some(credentials) = &policy.credentials {
        own_credentials(&mut spec, credentials);
    }
    spec.source = preview.spec.source.clone().map(Box::new);
    spec.autoscaling = None;
    spec.previews = None;
    let mut fleet = CelldFleet::new(&name, spec);
    fleet.metadata.namespace = Some(ns);
    fleet.metadata.labels = Some(BTreeMap::from([
        (PREVIEW.to_string(), name.clone()),
        (PREVIEW_OF.to_string(), parent.name_any()),
    ]));
    fleet.metadata.owner_references = preview.controller_owner_ref(&()).map(|o| vec![o]);
    fleet
}

/// Gives the preview's `spec` the previews' own `credentials` in place of its fleet's.
fn own_credentials(spec: &mut CelldFleetSpec, credentials: &PreviewCredentials) {
    if let Some(secret) = &credentials.credentials_secret_ref {
        spec.object_storage.credentials_secret_ref = Some(secret.clone());
    }
    if let Some(store) = &credentials.store_ref {
        spec.store_ref = Some(store.clone());
        let storage = &mut spec.object_storage;
        storage.endpoint = None;
        storage.region = None;
        storage.allow_http = None;
        storage.azure_storage_account = None;
        storage.credentials_secret_ref = None;
    }
    if let Some(account) = &credentials.service_account_name {
        spec.service_account_name = Some(account.clone());
        spec.object_storage.credentials_secret_ref = None;
    }
}

fn ingress_tls(tls: &PreviewTls) -> IngressTls {
    IngressTls {
        cluster_issuer: tls.cluster_issuer.clone(),
        secret_name: tls.secret_name.clone(),
    }
}

/// Whether `fleet` is the preview `preview`'s: controlled by it (same uid).
pub fn is_ours(fleet: &CelldFleet, preview: &CelldPreview) -> bool {
    let uid = preview.meta().uid.as_deref();
    fleet
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
}

/// Whether the live fleet `live` already is what [`render`] wants: the same spec, the
/// preview's labels and its owner. Anything else is applied again.
pub fn up_to_date(live: &CelldFleet, wanted: &CelldFleet) -> bool {
    let labels = live.labels();
    live.spec == wanted.spec
        && wanted
            .labels()
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
        && is_owned_like(live, wanted)
}

fn is_owned_like(live: &CelldFleet, wanted: &CelldFleet) -> bool {
    wanted
        .owner_references()
        .iter()
        .all(|w| live.owner_references().iter().any(|o| o.uid == w.uid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{CelldFleetSpec, CelldPreviewSpec};

    fn parent() -> CelldFleet {
        let mut spec = CelldFleetSpec::with_bucket("s3://celld/web");
        spec.replicas = 4;
        spec.previews = Some(
            serde_json::from_value(serde_json::json!({
                "baseDomain": "preview.example.com",
                "bucket": "s3://celld-previews/web",
                "ingressClass": "nginx",
                "tls": {"secretName": "preview-wildcard"}
            }))
            .unwrap(),
        );
        spec.autoscaling =
            Some(serde_json::from_value(serde_json::json!({"maxReplicas": 8})).unwrap());
        spec.env = vec![k8s_openapi::api::core::v1::EnvVar {
            name: "LOG".into(),
            value: Some("debug".into()),
            ..Default::default()
        }];
        let mut fleet = CelldFleet::new("web", spec);
        fleet.metadata.namespace = Some("shop".into());
        fleet
    }

    fn preview() -> CelldPreview {
        let mut p = CelldPreview::new(
            "pr-123",
            CelldPreviewSpec {
                fleet: "web".into(),
                ttl: None,
                source: None,
            },
        );
        p.metadata.namespace = Some("shop".into());
        p.metadata.uid = Some("uid-pr-123".into());
        p
    }

    #[test]
    fn a_preview_copies_its_fleet_with_its_own_host_prefix_and_size() {
        let parent = parent();
        let policy = parent.spec.previews.clone().unwrap();
        let child = render(&parent, &policy, &preview());
        insta::assert_yaml_snapshot!(child);
        assert!(is_ours(&child, &preview()));
        assert!(up_to_date(&child, &child));
        let mut other = preview();
        other.metadata.uid = Some("another".into());
        assert!(!is_ours(&child, &other));
    }

    #[test]
    fn previews_get_credentials_of_their_own() {
        let parent = parent();
        let mut policy = parent.spec.previews.clone().unwrap();
        let with = |credentials: serde_json::Value, policy: &mut PreviewPolicy| {
            policy.credentials = Some(serde_json::from_value(credentials).unwrap());
            render(&parent, policy, &preview()).spec
        };
        let secret = with(
            serde_json::json!({"credentialsSecretRef": {"name": "previews-s3"}}),
            &mut policy,
        );
        assert_eq!(
            secret.object_storage.credentials_secret_ref.map(|s| s.name),
            Some("previews-s3".into())
        );
        let store = with(
            serde_json::json!({"storeRef": {"name": "previews"}}),
            &mut policy,
        );
        assert_eq!(store.store_ref.map(|s| s.name), Some("previews".into()));
        assert_eq!(store.object_storage.credentials_secret_ref, None);
        assert_eq!(store.object_storage.endpoint, None);
        let identity = with(
            serde_json::json!({"serviceAccountName": "celld-previews"}),
            &mut policy,
        );
        assert_eq!(
            identity.service_account_name.as_deref(),
            Some("celld-previews")
        );
        assert_eq!(identity.object_storage.credentials_secret_ref, None);
    }

    #[test]
    fn a_change_of_the_fleet_or_a_hand_edit_is_applied_again() {
        let parent = parent();
        let policy = parent.spec.previews.clone().unwrap();
        let wanted = render(&parent, &policy, &preview());
        let mut edited = wanted.clone();
        edited.spec.replicas = 3;
        assert!(!up_to_date(&edited, &wanted));
        let mut relabelled = wanted.clone();
        relabelled.metadata.labels = None;
        assert!(!up_to_date(&relabelled, &wanted));
        let mut extra = wanted.clone();
        extra
            .metadata
            .labels
            .get_or_insert_default()
            .insert("team".into(), "shop".into());
        assert!(up_to_date(&extra, &wanted), "labels of its own are kept");
    }
}
