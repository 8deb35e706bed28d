//! NetworkPolicy `<fleet>`: the Worker port is open, the internal port 8081 (peer traffic and
//! celld's unauthenticated operator API) only to the fleet's own pods and deploy pods, and to
//! the operator's pods (by namespace and labels), which read the nodes' state. The nodes'
//! egress goes everywhere but the cloud metadata endpoints ([`metadata_egress`]), unless their
//! bucket identity is served there.

use super::metadata_egress::{self, BLOCKED_V4, BLOCKED_V6};
use super::{Desired, HTTP_PORT, INTERNAL_PORT};
use celld_api::labels;
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

/// Every address but `except`, within `cidr`.
fn all_but(cidr: &str, except: &[&str]) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        ip_block: Some(IPBlock {
            cidr: cidr.into(),
            except: Some(except.iter().map(|a| a.to_string()).collect()),
        }),
        ..NetworkPolicyPeer::default()
    }
}

/// The nodes' egress: every IPv4 and IPv6 address but the metadata endpoints, and every pod of
/// the cluster (some CNIs match pod addresses by pod and namespace only, never by ipBlock), DNS
/// included. None (egress not restricted) when the nodes' identity needs a metadata endpoint.
fn egress(d: &Desired) -> Option<Vec<NetworkPolicyEgressRule>> {
    if metadata_egress::identity_needs_metadata(&d.storage, &d.fleet.spec.pod_labels) {
        return None;
    }
    let every_pod = NetworkPolicyPeer {
        namespace_selector: Some(LabelSelector::default()),
        ..NetworkPolicyPeer::default()
    };
    Some(vec![NetworkPolicyEgressRule {
        to: Some(vec![
            all_but("0.0.0.0/0", BLOCKED_V4),
            all_but("::/0", BLOCKED_V6),
            every_pod,
        ]),
        ports: None,
    }])
}

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
    let egress = egress(d);
    let mut policy_types = vec!["Ingress".to_string()];
    if egress.is_some() {
        policy_types.push("Egress".into());
    }
    NetworkPolicy {
        metadata: d.meta(d.name.clone(), None),
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: Some(d.node_selector()),
                ..LabelSelector::default()
            }),
            policy_types: Some(policy_types),
            egress,
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

    fn policy_of(storage: &str, pod_labels: &str) -> NetworkPolicySpec {
        let fleet = fixtures::fleet(&format!(
            "apiVersion: platform.celld.dev/v1alpha1\nkind: CelldFleet\nmetadata: {{name: web}}\nspec: {{objectStorage: {storage}, podLabels: {pod_labels}}}\n"
        ));
        build(&fixtures::desired(&fleet)).spec.unwrap()
    }

    /// The except-lists of the egress rule's IP blocks, when egress is restricted.
    fn blocked(spec: &NetworkPolicySpec) -> Option<Vec<(String, Vec<String>)>> {
        let rules = spec.egress.as_ref()?;
        assert_eq!(rules.len(), 1, "one egress rule");
        assert!(rules[0].ports.is_none(), "every port");
        let peers = rules[0].to.as_ref().unwrap();
        assert!(
            peers
                .iter()
                .any(|p| p.namespace_selector == Some(LabelSelector::default())
                    && p.pod_selector.is_none()),
            "every pod of the cluster, DNS included"
        );
        Some(
            peers
                .iter()
                .filter_map(|p| p.ip_block.clone())
                .map(|b| (b.cidr, b.except.unwrap_or_default()))
                .collect(),
        )
    }

    fn types(spec: &NetworkPolicySpec) -> Vec<String> {
        spec.policy_types.clone().unwrap()
    }

    #[test]
    fn keys_or_a_token_identity_keep_the_nodes_from_the_metadata_endpoints() {
        let everything_but_metadata = vec![
            (
                "0.0.0.0/0".to_string(),
                vec![
                    "169.254.169.254/32".to_string(),
                    "169.254.169.252/32".into(),
                    "100.100.100.200/32".into(),
                ],
            ),
            ("::/0".to_string(), vec!["fd00:ec2::254/128".to_string()]),
        ];
        for (storage, labels) in [
            (
                "{bucket: s3://b/p, credentialsSecretRef: {name: keys}}",
                "{}",
            ),
            // IRSA or EKS Pod Identity (169.254.170.23 stays open).
            ("{bucket: s3://b/p}", "{}"),
            (
                "{bucket: gs://b/p, credentialsSecretRef: {name: key}}",
                "{}",
            ),
            (
                "{bucket: az://c/p, azureStorageAccount: acct}",
                "{azure.workload.identity/use: \"true\"}",
            ),
        ] {
            let spec = policy_of(storage, labels);
            assert_eq!(types(&spec), ["Ingress", "Egress"], "{storage}");
            assert_eq!(
                blocked(&spec),
                Some(everything_but_metadata.clone()),
                "{storage}"
            );
        }
    }

    #[test]
    fn an_identity_served_by_the_metadata_endpoint_keeps_it() {
        for storage in [
            // GKE Workload Identity: the GKE metadata server.
            "{bucket: gs://b/p}",
            // An AKS managed identity: Azure's instance metadata service.
            "{bucket: az://c/p, azureStorageAccount: acct}",
        ] {
            let spec = policy_of(storage, "{}");
            assert_eq!(
                types(&spec),
                ["Ingress"],
                "{storage}: egress not restricted"
            );
            assert_eq!(blocked(&spec), None, "{storage}");
            assert_eq!(
                spec.ingress.unwrap().len(),
                2,
                "{storage}: ingress unchanged"
            );
        }
    }
}
