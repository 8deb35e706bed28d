//! A fleet that declares its Worker in spec.source: the operator publishes it, so git decides
//! what the fleet serves. What names the source, whether publishing from it is suspended
//! (spec.source.suspend, or the `platform.celld.dev/source-suspended` annotation, which GitOps
//! tools never set), the commands that suspend and resume it, and the merge patches that do.

use crate::cluster::fleet_context::FleetContext;
use crate::cluster::fleets::{FIELD_MANAGER, RESOURCE};
use crate::error::{Error, Result};
use celld_api::labels::SOURCE_SUSPENDED;
use celld_api::{CelldFleet, DriftPolicy, WorkerSource};
use kube::Api;
use kube::api::{Patch, PatchParams};

pub use celld_api::conditions::SOURCE_SYNCED;

/// What keeps the operator from publishing a fleet's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suspension {
    /// spec.source.suspend is true: a pause made in the manifest (in git).
    Spec,
    /// The annotation is set; its value is the reason.
    Annotation(String),
}

impl Suspension {
    /// Where the suspension comes from, and why, in a few words.
    pub fn describe(&self) -> String {
        match self {
            Self::Spec => "spec.source.suspend is true".to_string(),
            Self::Annotation(reason) if reason.trim().is_empty() => {
                format!("annotation {SOURCE_SUSPENDED}, no reason given")
            }
            Self::Annotation(reason) => format!("annotation {SOURCE_SUSPENDED}: {reason}"),
        }
    }
}

/// The fleet's spec.source, when it declares one.
pub fn of(fleet: &CelldFleet) -> Option<&WorkerSource> {
    fleet.spec.source.as_deref()
}

/// Why publishing from the fleet's source is suspended, if it is: spec.source.suspend first,
/// else the annotation (set with any value, even an empty one).
pub fn suspension(fleet: &CelldFleet) -> Option<Suspension> {
    if of(fleet).is_some_and(|s| s.suspend) {
        return Some(Suspension::Spec);
    }
    fleet
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SOURCE_SUSPENDED))
        .map(|reason| Suspension::Annotation(reason.clone()))
}

/// The source as a user recognises it: `image REFERENCE` or `KIND/NAME` of a Flux source.
pub fn name(source: &WorkerSource) -> String {
    match (&source.image, &source.source_ref) {
        (Some(image), _) => format!("image {}", image.reference),
        (None, Some(r)) => format!("{}/{}", r.kind.as_str(), r.name),
        (None, None) => "a source naming neither an image nor a sourceRef".to_string(),
    }
}

/// The drift policy as the manifest spells it.
pub fn policy(policy: DriftPolicy) -> &'static str {
    match policy {
        DriftPolicy::Correct => "Correct",
        DriftPolicy::Report => "Report",
    }
}

/// The command that suspends publishing from the source of `fleet` in `namespace`.
pub fn suspend_command(fleet: &str, namespace: &str) -> String {
    format!("kubectl annotate celldfleet {fleet} -n {namespace} {SOURCE_SUSPENDED}=\"REASON\"")
}

/// The command that resumes publishing from the source of `fleet` in `namespace`.
pub fn resume_command(fleet: &str, namespace: &str) -> String {
    format!("kubectl annotate celldfleet {fleet} -n {namespace} {SOURCE_SUSPENDED}-")
}

/// The merge patch setting the annotation to `reason`, or removing it (None).
pub fn patch(reason: Option<&str>) -> serde_json::Value {
    serde_json::json!({"metadata": {"annotations": {SOURCE_SUSPENDED: reason}}})
}

/// Sets (`Some(reason)`) or removes (None) the annotation on the context's fleet, with a merge
/// patch under the plugin's field manager.
pub async fn annotate(context: &FleetContext, reason: Option<&str>) -> Result<()> {
    let api: Api<CelldFleet> = Api::namespaced(context.target.client.clone(), context.namespace());
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    api.patch(context.name(), &params, &Patch::Merge(patch(reason)))
        .await
        .map(|_| ())
        .map_err(|e| Error::api("patch", RESOURCE, Some(context.namespace()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{CelldFleetSpec, FluxSourceKind, FluxSourceRef};
    use std::collections::BTreeMap;

    fn fleet(source: Option<WorkerSource>, annotation: Option<&str>) -> CelldFleet {
        let mut spec = CelldFleetSpec::with_bucket("s3://celld/web");
        spec.source = source.map(Box::new);
        let mut fleet = CelldFleet::new("web", spec);
        fleet.metadata.annotations = annotation
            .map(|reason| BTreeMap::from([(SOURCE_SUSPENDED.to_string(), reason.to_string())]));
        fleet
    }

    #[test]
    fn names_an_image_or_a_flux_source() {
        let image = WorkerSource::from_image("ghcr.io/acme/web-worker:1.4.2");
        assert_eq!(name(&image), "image ghcr.io/acme/web-worker:1.4.2");
        let flux = WorkerSource {
            image: None,
            source_ref: Some(FluxSourceRef {
                kind: FluxSourceKind::OCIRepository,
                name: "web-worker".into(),
            }),
            ..image
        };
        assert_eq!(name(&flux), "OCIRepository/web-worker");
    }

    #[test]
    fn suspended_by_the_spec_or_the_annotation() {
        let source = WorkerSource::from_image("ghcr.io/acme/web-worker:1.4.2");
        assert_eq!(suspension(&fleet(Some(source.clone()), None)), None);
        let by_hand = fleet(Some(source.clone()), Some("incident 42"));
        assert_eq!(
            suspension(&by_hand).map(|s| s.describe()).as_deref(),
            Some("annotation platform.celld.dev/source-suspended: incident 42")
        );
        let mut in_git = source;
        in_git.suspend = true;
        assert_eq!(
            suspension(&fleet(Some(in_git), Some(""))),
            Some(Suspension::Spec)
        );
        assert_eq!(
            Suspension::Annotation(String::new()).describe(),
            "annotation platform.celld.dev/source-suspended, no reason given"
        );
    }

    #[test]
    fn patches_set_or_remove_only_the_annotation() {
        assert_eq!(
            patch(Some("why")),
            serde_json::json!({"metadata": {"annotations": {"platform.celld.dev/source-suspended": "why"}}})
        );
        assert_eq!(
            patch(None),
            serde_json::json!({"metadata": {"annotations": {"platform.celld.dev/source-suspended": null}}})
        );
        assert_eq!(
            resume_command("web", "apps"),
            "kubectl annotate celldfleet web -n apps platform.celld.dev/source-suspended-"
        );
    }
}
