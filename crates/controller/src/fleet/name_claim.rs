//! Never adopt: the operator applies a child only over an object the fleet controls (its
//! controller owner reference names the fleet's uid). The caches hold only objects with the
//! operator's labels, so a child they do not hold is looked up by name before its first
//! apply; an object found there, or in the cache, that the fleet does not control is left
//! alone. The managed-by label is not enough: another fleet's children carry it too (fleet
//! `web-peer`'s public Service has the name of fleet `web`'s peer Service).

use crate::cache::owner_index::controller_uid;
use crate::children::Child;
use crate::error::Error;
use kube::api::ObjectMeta;
use kube::{Api, Resource};

/// Whose the object is, for a message: its controller, or what it lacks.
pub fn holder(meta: &ObjectMeta) -> String {
    let controller = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    if let Some(owner) = controller {
        return format!("its controller is {} {}", owner.kind, owner.name);
    }
    match meta
        .labels
        .as_ref()
        .and_then(|l| l.get("app.kubernetes.io/managed-by"))
    {
        Some(manager) => format!("it is managed by {manager} and has no controller"),
        None => "it has no owner reference to the fleet".to_string(),
    }
}

/// Whose `object` is when the fleet `uid` does not control it; None when it does.
pub fn foreign<K: Resource>(object: &K, uid: &str) -> Option<String> {
    (controller_uid(object) != Some(uid)).then(|| holder(object.meta()))
}

/// Whose the object `name` of `api` is, read from the API server, when it exists and the fleet
/// `uid` does not control it; None when the name is free or the fleet's.
pub async fn taken<K: Child>(api: &Api<K>, name: &str, uid: &str) -> Result<Option<String>, Error> {
    let found = api
        .get_metadata_opt(name)
        .await
        .map_err(|e| Error::kube(format!("reading {} {name}", K::kind(&())), e))?;
    Ok(found.and_then(|object| foreign(&object, uid)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Service;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use std::collections::BTreeMap;

    fn owned_by(kind: &str, name: &str, uid: &str) -> Service {
        let mut service = Service::default();
        service.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "platform.celld.dev/v1alpha1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            controller: Some(true),
            ..OwnerReference::default()
        }]);
        service
    }

    #[test]
    fn only_the_fleets_controller_reference_makes_a_child_its_own() {
        assert_eq!(foreign(&owned_by("CelldFleet", "web", "u1"), "u1"), None);
        assert_eq!(
            foreign(&owned_by("CelldFleet", "web-peer", "u2"), "u1").as_deref(),
            Some("its controller is CelldFleet web-peer")
        );
        let mut labelled = Service::default();
        labelled.metadata.labels = Some(BTreeMap::from([(
            "app.kubernetes.io/managed-by".to_string(),
            "helm".to_string(),
        )]));
        assert_eq!(
            foreign(&labelled, "u1").as_deref(),
            Some("it is managed by helm and has no controller")
        );
        assert_eq!(
            foreign(&Service::default(), "u1").as_deref(),
            Some("it has no owner reference to the fleet")
        );
    }
}
