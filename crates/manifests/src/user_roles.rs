//! ClusterRoles for the people who use fleets, aggregated into the built-in roles: `view` can
//! read fleets, stores and previews, `edit` (and `admin`) can also change them and scale fleets. Bound
//! through the built-in roles, they apply in the namespaces where a user holds those.

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// The read-only ClusterRole, aggregated into `view`.
pub const VIEWER: &str = "celld-fleet-viewer";
/// The read-write ClusterRole, aggregated into `edit` and `admin`.
pub const EDITOR: &str = "celld-fleet-editor";

const GROUP: &str = "platform.celld.dev";
const RESOURCES: &[&str] = &[
    "celldfleets",
    "celldobjectstores",
    "celldpreviews",
    "celldrollouts",
];
const STATUS: &[&str] = &[
    "celldfleets/status",
    "celldobjectstores/status",
    "celldpreviews/status",
    "celldrollouts/status",
];
const SCALE: &[&str] = &["celldfleets/scale"];
const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];
const SCALE_VERBS: &[&str] = &["get", "update", "patch"];

fn rule(resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![GROUP.to_string()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..PolicyRule::default()
    }
}

fn role(name: &str, aggregate_to: &[&str], rules: Vec<PolicyRule>) -> ClusterRole {
    let mut labels = crate::operator::labels();
    labels.extend(aggregate_to.iter().map(|to| {
        (
            format!("rbac.authorization.k8s.io/aggregate-to-{to}"),
            "true".to_string(),
        )
    }));
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        rules: Some(rules),
        ..ClusterRole::default()
    }
}

/// `celld-fleet-viewer` (get, list and watch fleets, stores, previews and their status; into
/// `view`) and
/// `celld-fleet-editor` (also create, update, patch, delete them and scale fleets; into `edit`
/// and `admin`).
pub fn user_roles() -> [ClusterRole; 2] {
    let viewer = role(
        VIEWER,
        &["view"],
        vec![rule(RESOURCES, READ), rule(STATUS, READ)],
    );
    let editor = role(
        EDITOR,
        &["edit", "admin"],
        vec![
            rule(RESOURCES, WRITE),
            rule(STATUS, READ),
            rule(SCALE, SCALE_VERBS),
        ],
    );
    [viewer, editor]
}

/// The aggregation labels of a role, `view`, `edit` or `admin` for each
/// `rbac.authorization.k8s.io/aggregate-to-*: "true"`.
pub fn aggregated_into(role: &ClusterRole) -> Vec<String> {
    role.metadata
        .labels
        .as_ref()
        .unwrap_or(&BTreeMap::new())
        .iter()
        .filter(|(_, value)| value.as_str() == "true")
        .filter_map(|(key, _)| key.strip_prefix("rbac.authorization.k8s.io/aggregate-to-"))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verbs_on(role: &ClusterRole, resource: &str) -> Vec<String> {
        role.rules
            .iter()
            .flatten()
            .filter(|r| r.resources.iter().flatten().any(|x| x == resource))
            .flat_map(|r| r.verbs.clone())
            .collect()
    }

    #[test]
    fn the_viewer_reads_and_is_aggregated_into_view() {
        let [viewer, _] = user_roles();
        assert_eq!(aggregated_into(&viewer), ["view"]);
        for resource in ["celldfleets", "celldobjectstores", "celldfleets/status"] {
            assert_eq!(verbs_on(&viewer, resource), READ, "{resource}");
        }
        assert!(verbs_on(&viewer, "celldfleets/scale").is_empty());
    }

    #[test]
    fn the_editor_writes_scales_and_is_aggregated_into_edit_and_admin() {
        let [_, editor] = user_roles();
        assert_eq!(aggregated_into(&editor), ["admin", "edit"]);
        for resource in ["celldfleets", "celldobjectstores"] {
            assert_eq!(verbs_on(&editor, resource), WRITE, "{resource}");
        }
        assert_eq!(verbs_on(&editor, "celldfleets/scale"), SCALE_VERBS);
        assert!(!verbs_on(&editor, "celldfleets/status").contains(&"patch".to_string()));
    }
}
