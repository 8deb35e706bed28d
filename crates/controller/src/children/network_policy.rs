//! NetworkPolicy `<fleet>`: the Worker port is open, the internal port 8081 (peer traffic and
//! celld's unauthenticated operator API) only to the fleet's own pods and deploy pods, and to
//! the operator's pods (by namespace and labels), which read the nodes' state.

use super::{Desired, HTTP_PORT, INTERNAL_PORT};
use celld_api::labels;
use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicyPort,
    NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

/// The NetworkPolicy of a fleet.
pub fn build(d: &Desired) -> NetworkPolicy {
    let tcp = |port| NetworkPolicyPort {
        port: Some(IntOrString::Int(port)),
        protocol: Some("TCP".into()),
        ..NetworkPolicyPort::default()
    };
    let same_fleet = NetworkPolicyPeer {
        pod_selector: Some(LabelSelector {
            match_labels: Some(BTreeMap::from([(
                labels::FLEET.to_string(),
                d.name.clone(),
            )])),
            ..LabelSelector::default()
        }),
        ..NetworkPolicyPeer::default()
    };
    let operator = NetworkPolicyPeer {
        namespace_selector: Some(LabelSelector {
            match_labels: Some(BTreeMap::from([(
                "kubernetes.io/metadata.name".to_string(),
                d.operator.namespace.clone(),
            )])),
            ..LabelSelector::default()
        }),
        pod_selector: Some(LabelSelector {
            match_labels: Some(d.operator.labels.clone()),
            ..LabelSelector::default()
        }),
        ..NetworkPolicyPeer::default()
    };
    NetworkPolicy {
        metadata: d.meta(d.name.clone(), None),
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: Some(d.node_selector()),
                ..LabelSelector::default()
            }),
            policy_types: Some(vec!["Ingress".into()]),
            ingress: Some(vec![
                NetworkPolicyIngressRule {
                    ports: Some(vec![tcp(HTTP_PORT)]),
                    ..NetworkPolicyIngressRule::default()
                },
                NetworkPolicyIngressRule {
                    from: Some(vec![same_fleet, operator]),
                    ports: Some(vec![tcp(INTERNAL_PORT)]),
                },
            ]),
            ..NetworkPolicySpec::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures;

    #[test]
    fn internal_port_only_from_the_fleet_and_the_operator() {
        let fleet = fixtures::fleet(fixtures::MINIMAL);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }
}
