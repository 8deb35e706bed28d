//! The operator as the manifests name it: its name, namespace and labels.

use std::collections::BTreeMap;

/// Name of the operator's ClusterRole, Role, ServiceAccount and Deployment.
pub const OPERATOR: &str = "celld-operator";
/// Namespace the operator is installed into.
pub const NAMESPACE: &str = "celld-system";

/// The labels of every object the manifests give the operator.
pub fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([("app.kubernetes.io/name".to_string(), OPERATOR.to_string())])
}
