//! The permissions the operator uses, and no more. `config/rbac/role.yaml` is generated from
//! these rules, and the integration tests run the operator under exactly them.

use crate::cache::caches::ChildCaches;
use k8s_openapi::api::rbac::v1::PolicyRule;
use std::collections::BTreeMap;

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

/// The rules that let the operator own every child kind of [`ChildCaches::kinds`], one rule per
/// API group.
fn child_rules() -> Vec<PolicyRule> {
    let mut by_group: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for kind in ChildCaches::kinds() {
        by_group.entry(kind.group).or_default().push(kind.plural);
    }
    by_group
        .into_iter()
        .map(|(group, plurals)| {
            let plurals: Vec<&str> = plurals.iter().map(String::as_str).collect();
            rule(&group, &plurals, OWN)
        })
        .collect()
}

/// Cluster-wide rules (the cluster-wide install's ClusterRole): the operator watches fleets in
/// every namespace and owns their children, reads the Gateways their routes attach to, and
/// checks who may read its `/metrics`.
pub fn cluster_rules() -> Vec<PolicyRule> {
    let mut rules = watched_namespace_rules();
    rules.push(gateway_rule());
    rules.extend(metrics_auth_rules());
    rules
}

/// The reviews that guard `/metrics` (`--metrics-secure`): a TokenReview says who holds a
/// scraper's bearer token, a SubjectAccessReview whether they may `get` `/metrics`. Only
/// `create`, and both kinds are cluster-scoped: they grant nothing but asking the API server.
pub fn metrics_auth_rules() -> Vec<PolicyRule> {
    vec![
        rule("authentication.k8s.io", &["tokenreviews"], &["create"]),
        rule(
            "authorization.k8s.io",
            &["subjectaccessreviews"],
            &["create"],
        ),
    ]
}

/// What a scraper needs to read the operator's `/metrics` (the ClusterRole
/// `celld-operator-metrics-reader` of both installs): `get` of that URL, nothing else.
pub fn metrics_reader_rules() -> Vec<PolicyRule> {
    vec![PolicyRule {
        non_resource_urls: Some(vec!["/metrics".into()]),
        verbs: vec!["get".into()],
        ..PolicyRule::default()
    }]
}

/// The read of the Gateways a fleet's HTTPRoute attaches to, which may be in any namespace
/// (`spec.ingress.gatewayRefs[].namespace`, often a shared infrastructure one): whether each
/// listener terminates TLS decides whether `status.url` says https. Only `get`, of Gateways.
pub fn gateway_rule() -> PolicyRule {
    rule("gateway.networking.k8s.io", &["gateways"], &["get"])
}

/// Rules in one watched namespace (the namespace-scoped install's Role in each): everything
/// the operator does with the fleets, stores, previews and rollouts of that namespace and their children.
pub fn watched_namespace_rules() -> Vec<PolicyRule> {
    let mut rules = vec![
        rule("platform.celld.dev", &["celldobjectstores"], READ),
        // A preview's fleet is the operator's own: applied, stopped and deleted by it.
        rule("platform.celld.dev", &["celldfleets"], OWN),
        // Previews: read, and their finalizer added and removed (patch).
        rule(
            "platform.celld.dev",
            &["celldpreviews"],
            &["get", "list", "watch", "patch"],
        ),
        // Rollouts: read; their status written (the fleets they ship to follow it).
        rule("platform.celld.dev", &["celldrollouts"], READ),
        rule(
            "platform.celld.dev",
            &[
                "celldfleets/status",
                "celldobjectstores/status",
                "celldpreviews/status",
                "celldrollouts/status",
            ],
            &["get", "patch"],
        ),
        rule("", &["secrets"], READ),
        // Whether every old node is gone before a fully stopped fleet starts its new image.
        // Node pods are watched for their self-fences and listed when a rollout stalls;
        // deploy pods are watched for the result of a spec.source publish (read from the
        // termination message: no pods/exec).
        rule("", &["pods"], READ),
        rule(
            "batch",
            &["jobs"],
            &["get", "list", "watch", "create", "delete"],
        ),
        rule(
            crate::cache::source_caches::FLUX_SOURCE_GROUP,
            &["ocirepositories", "gitrepositories", "buckets"],
            READ,
        ),
        rule("events.k8s.io", &["events"], &["create", "patch"]),
    ];
    rules.extend(child_rules());
    rules
}

/// Rules in the operator's own namespace: the leader-election Lease.
pub fn namespace_rules() -> Vec<PolicyRule> {
    vec![rule(
        "coordination.k8s.io",
        &["leases"],
        &["get", "list", "watch", "create", "update", "patch"],
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watched_namespace_grants_all_but_the_gateway_read_and_the_metrics_reviews() {
        let mut namespaced = watched_namespace_rules();
        namespaced.push(gateway_rule());
        namespaced.extend(metrics_auth_rules());
        assert_eq!(namespaced, cluster_rules());
        assert!(
            !watched_namespace_rules().iter().any(|r| r
                .resources
                .iter()
                .flatten()
                .any(|x| x == "gateways"))
        );
    }

    fn grants(group: &str, resource: &str, verb: &str) -> bool {
        cluster_rules().iter().any(|r| {
            r.api_groups
                .as_deref()
                .unwrap_or_default()
                .iter()
                .any(|g| g == group)
                && r.resources
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .any(|x| x == resource)
                && r.verbs.iter().any(|v| v == verb)
        })
    }

    #[test]
    fn deploy_jobs_are_run_and_read_without_exec() {
        for verb in ["create", "delete", "watch"] {
            assert!(grants("batch", "jobs", verb), "jobs {verb}");
        }
        assert!(grants("", "pods", "watch"));
        assert!(grants(
            crate::cache::source_caches::FLUX_SOURCE_GROUP,
            "buckets",
            "watch"
        ));
        for verb in ["create", "get"] {
            assert!(!grants("", "pods/exec", verb), "no pods/exec");
        }
        assert!(!grants("", "pods", "create"), "pods only through Jobs");
        assert!(
            !grants("", "secrets", "create"),
            "Secrets are read, never written"
        );
    }

    #[test]
    fn previews_own_their_fleets_and_never_create_previews() {
        for verb in ["create", "patch", "delete"] {
            assert!(
                grants("platform.celld.dev", "celldfleets", verb),
                "celldfleets {verb}"
            );
        }
        assert!(grants("platform.celld.dev", "celldpreviews", "patch"));
        assert!(grants(
            "platform.celld.dev",
            "celldpreviews/status",
            "patch"
        ));
        assert!(!grants("platform.celld.dev", "celldpreviews", "create"));
        assert!(!grants("platform.celld.dev", "celldobjectstores", "patch"));
    }
}
