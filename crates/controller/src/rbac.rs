//! The permissions the operator uses, and no more. `config/rbac/role.yaml` is generated from
//! these rules, and the integration tests run the operator under exactly them.

use k8s_openapi::api::rbac::v1::PolicyRule;

const READ: &[&str] = &["get", "list", "watch"];
const OWN: &[&str] = &["get", "list", "watch", "create", "patch", "delete"];

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_string()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..PolicyRule::default()
    }
}

/// Cluster-wide rules: the operator watches fleets in every namespace and owns their children.
pub fn cluster_rules() -> Vec<PolicyRule> {
    vec![
        rule(
            "platform.celld.dev",
            &["celldfleets", "celldobjectstores"],
            READ,
        ),
        rule(
            "platform.celld.dev",
            &["celldfleets/status", "celldobjectstores/status"],
            &["get", "patch"],
        ),
        rule("apps", &["statefulsets"], OWN),
        rule("", &["services"], OWN),
        rule("", &["secrets"], READ),
        rule("networking.k8s.io", &["ingresses", "networkpolicies"], OWN),
        rule("policy", &["poddisruptionbudgets"], OWN),
        rule("gateway.networking.k8s.io", &["httproutes"], OWN),
        rule("gateway.networking.k8s.io", &["gateways"], &["get"]),
        rule("events.k8s.io", &["events"], &["create", "patch"]),
    ]
}

/// Rules in the operator's own namespace: the leader-election Lease.
pub fn namespace_rules() -> Vec<PolicyRule> {
    vec![rule(
        "coordination.k8s.io",
        &["leases"],
        &["get", "list", "watch", "create", "update", "patch"],
    )]
}
