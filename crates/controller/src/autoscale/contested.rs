//! Who else sets a fleet's node count: a writer of spec.replicas through the scale subresource
//! (a HorizontalPodAutoscaler, a KEDA ScaledObject, `kubectl scale`), as the fleet's
//! managedFields record it. Pure.

use celld_api::CelldFleet;

/// The field manager that last set spec.replicas through the scale subresource, when the value
/// it set differs from `desired` (what spec.autoscaling wants): the autoscaler and that writer
/// would otherwise disagree in silence.
pub fn contested(fleet: &CelldFleet, desired: i32) -> Option<String> {
    if fleet.spec.replicas == desired {
        return None;
    }
    fleet
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|m| m.subresource.as_deref() == Some("scale"))
        .filter(|m| {
            m.fields_v1
                .as_ref()
                .and_then(|f| f.0.get("f:spec"))
                .and_then(|spec| spec.get("f:replicas"))
                .is_some()
        })
        .max_by_key(|m| m.time.as_ref().map(|t| t.0))
        .map(|m| {
            m.manager
                .clone()
                .unwrap_or_else(|| "an unnamed manager".into())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
    use serde_json::json;

    fn fleet(replicas: i32, managers: Vec<ManagedFieldsEntry>) -> CelldFleet {
        let mut fleet = CelldFleet::new("web", celld_api::CelldFleetSpec::with_bucket("s3://b/p"));
        fleet.spec.replicas = replicas;
        fleet.metadata.managed_fields = Some(managers);
        fleet
    }

    fn entry(
        manager: &str,
        subresource: Option<&str>,
        fields: serde_json::Value,
    ) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.into()),
            subresource: subresource.map(str::to_string),
            fields_v1: Some(FieldsV1(fields)),
            ..ManagedFieldsEntry::default()
        }
    }

    #[test]
    fn names_the_scale_writer_only_when_it_disagrees() {
        let replicas = json!({"f:spec": {"f:replicas": {}}});
        let hpa = entry("kube-controller-manager", Some("scale"), replicas.clone());
        let gitops = entry("argocd-controller", None, replicas);
        assert_eq!(
            contested(&fleet(5, vec![gitops.clone(), hpa.clone()]), 3).as_deref(),
            Some("kube-controller-manager")
        );
        assert_eq!(contested(&fleet(3, vec![hpa]), 3), None, "agrees");
        assert_eq!(
            contested(&fleet(5, vec![gitops]), 3),
            None,
            "spec.replicas is where it starts"
        );
        let labels = entry("kubectl", Some("scale"), json!({"f:metadata": {}}));
        assert_eq!(contested(&fleet(5, vec![labels]), 3), None);
    }
}
