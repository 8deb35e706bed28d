//! The ClusterRole a Prometheus (or any scraper) is bound to, with a ClusterRoleBinding of its
//! own, to read the operator's `/metrics`: the operator serves it only to bearer tokens whose
//! identity the API server allows `get` of that URL.

use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The ClusterRole's name, as the operator's 403 names it.
pub const METRICS_READER: &str = "celld-operator-metrics-reader";

/// `get` of `/metrics`, nothing else; bound to nobody by the installs.
pub fn metrics_reader() -> ClusterRole {
    ClusterRole {
        metadata: ObjectMeta {
            name: Some(METRICS_READER.to_string()),
            labels: Some(crate::operator::labels()),
            ..ObjectMeta::default()
        },
        rules: Some(celld_operator::rbac::metrics_reader_rules()),
        ..ClusterRole::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_the_operator_refuses_with() {
        assert_eq!(
            METRICS_READER,
            celld_operator::runtime::secure_metrics::verdict::READER_ROLE
        );
    }
}
