//! PodDisruptionBudget `<fleet>` (when the StatefulSet runs more than one node): one node
//! drains at a time. A fleet held at 0 nodes (no deployment yet) has none.

use super::Desired;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The PodDisruptionBudget of a fleet whose StatefulSet runs more than one node.
pub fn build(d: &Desired) -> Option<PodDisruptionBudget> {
    (d.replicas > 1).then(|| PodDisruptionBudget {
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
    fn none_while_held_at_zero_nodes() {
        let fleet = fixtures::fleet(fixtures::FULL);
        let mut held = fixtures::desired(&fleet);
        held.replicas = 0;
        assert!(build(&held).is_none());
    }

    #[test]
    fn none_for_a_single_node() {
        let fleet = fixtures::fleet(fixtures::MINIMAL);
        assert!(build(&fixtures::desired(&fleet)).is_none());
    }
}
