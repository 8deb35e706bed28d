//! PodDisruptionBudget `<fleet>` (when replicas > 1): one node drains at a time.

use super::Desired;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The PodDisruptionBudget of a fleet with more than one node.
pub fn build(d: &Desired) -> Option<PodDisruptionBudget> {
    (d.fleet.spec.replicas > 1).then(|| PodDisruptionBudget {
        metadata: d.meta(d.name.clone(), None),
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(1)),
            selector: Some(LabelSelector {
                match_labels: Some(d.node_selector()),
                ..LabelSelector::default()
            }),
            ..PodDisruptionBudgetSpec::default()
        }),
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures;

    #[test]
    fn max_unavailable_one() {
        let fleet = fixtures::fleet(fixtures::FULL);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }

    #[test]
    fn none_for_a_single_node() {
        let fleet = fixtures::fleet(fixtures::MINIMAL);
        assert!(build(&fixtures::desired(&fleet)).is_none());
    }
}
