//! The operator's guard: a ValidatingAdmissionPolicy that holds the operator's own
//! ServiceAccount to what it is for, whatever its RBAC grants. RBAC can only say "Jobs in every
//! namespace"; the guard says which: the operator may create, change and delete the child kinds
//! of [`ChildCaches::kinds`], deploy Jobs and preview fleets only when they carry its
//! `app.kubernetes.io/managed-by` label (a preview's fleet: its preview) and a controller owner
//! reference to a CelldFleet or CelldPreview, before and after the change; never in
//! `kube-system` (or the other system namespaces) or its own namespace; and only with pods that
//! mount no ServiceAccount token, use no host path, host network, PID or IPC, and run nothing
//! privileged. A stolen operator token then cannot start a pod with another identity, nor touch
//! an object the operator does not manage.

use crate::cache::caches::ChildCaches;
use crate::children::MANAGER;
use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, Validation, Variable,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// The name of the installs' policy and of its binding.
pub const NAME: &str = "celld-operator-guard";

/// Namespaces the operator never writes children or Jobs into, besides its own.
pub const SYSTEM_NAMESPACES: &[&str] = &["kube-system", "kube-public", "kube-node-lease"];

/// Whose requests the guard judges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The operator's ServiceAccount `name` in its namespace (the installs').
    ServiceAccount {
        /// The operator's namespace (also refused as a target).
        namespace: String,
        /// The ServiceAccount's name.
        name: String,
    },
    /// Every ServiceAccount called `name`, in any namespace, each kept out of the namespace
    /// `home` (the test suite's operators, one per test namespace).
    AnyServiceAccountNamed {
        /// The ServiceAccounts' name.
        name: String,
        /// The namespace refused as the operator's own.
        home: String,
    },
}

impl Subject {
    fn match_expression(&self) -> String {
        match self {
            Self::ServiceAccount { namespace, name } => {
                format!("request.userInfo.username == 'system:serviceaccount:{namespace}:{name}'")
            }
            Self::AnyServiceAccountNamed { name, .. } => format!(
                "request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':{name}')"
            ),
        }
    }

    /// The name of the policy and binding judging this subject: [`NAME`] for the installs'.
    pub fn policy_name(&self) -> String {
        match self {
            Self::ServiceAccount { .. } => NAME.to_string(),
            Self::AnyServiceAccountNamed { name, .. } => format!("{NAME}-any-{name}"),
        }
    }

    fn home(&self) -> &str {
        match self {
            Self::ServiceAccount { namespace, .. } => namespace,
            Self::AnyServiceAccountNamed { home, .. } => home,
        }
    }
}

/// A CEL list literal of `items`.
fn cel_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// The resources the guard covers, by API group: the child kinds, Jobs and CelldFleets.
fn resources() -> BTreeMap<String, Vec<String>> {
    let mut by_group: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for kind in ChildCaches::kinds() {
        by_group.entry(kind.group).or_default().push(kind.plural);
    }
    by_group
        .entry("batch".into())
        .or_default()
        .push("jobs".into());
    by_group
        .entry(celld_api::GROUP.into())
        .or_default()
        .push("celldfleets".into());
    by_group
}

fn variable(name: &str, expression: &str) -> Variable {
    Variable {
        name: name.to_string(),
        expression: expression.to_string(),
    }
}

fn check(expression: &str, message: &str) -> Validation {
    Validation {
        expression: expression.to_string(),
        message: Some(message.to_string()),
        reason: Some("Forbidden".to_string()),
        ..Validation::default()
    }
}

/// Whether the object in the CEL variable `v` is one the operator manages: a preview's fleet
/// owned by its CelldPreview, or anything else with the managed-by label and a CelldFleet or
/// CelldPreview controller.
fn managed(v: &str) -> String {
    format!(
        "(request.resource.resource == 'celldfleets' || ({v}.metadata.?labels[?'app.kubernetes.io/managed-by'].orValue('') == '{MANAGER}')) && \
         {v}.metadata.?ownerReferences.orValue([]).exists(o, o.?controller.orValue(false) && o.apiVersion.startsWith('{group}/') && \
         (request.resource.resource == 'celldfleets' ? o.kind == 'CelldPreview' : o.kind in ['CelldFleet', 'CelldPreview']))",
        group = celld_api::GROUP,
    )
}

/// The policy for the operator identified by `subject`.
pub fn policy(subject: &Subject) -> ValidatingAdmissionPolicy {
    let mut refused = SYSTEM_NAMESPACES.to_vec();
    refused.push(subject.home());
    let rules = resources()
        .into_iter()
        .map(|(group, plurals)| NamedRuleWithOperations {
            api_groups: Some(vec![group]),
            api_versions: Some(vec!["*".into()]),
            resources: Some(plurals),
            operations: Some(vec!["CREATE".into(), "UPDATE".into(), "DELETE".into()]),
            ..NamedRuleWithOperations::default()
        })
        .collect();
    let pod = "variables.pod";
    let containers = format!(
        "{pod}.containers + {pod}.?initContainers.orValue([]) + {pod}.?ephemeralContainers.orValue([])"
    );
    ValidatingAdmissionPolicy {
        metadata: meta(subject),
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".into()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(rules),
                ..MatchResources::default()
            }),
            match_conditions: Some(vec![MatchCondition {
                name: "the-operator".into(),
                expression: subject.match_expression(),
            }]),
            variables: Some(vec![
                variable(
                    "namespaced",
                    &format!("!(request.namespace in {})", cel_list(&refused)),
                ),
                variable(
                    "pod",
                    "request.operation != 'DELETE' && request.resource.resource in ['jobs', 'statefulsets'] ? object.spec.template.spec : null",
                ),
            ]),
            validations: Some(vec![
                check(
                    "variables.namespaced",
                    &format!(
                        "the celld operator writes no object in {}: fleets and their children live in the tenants' namespaces",
                        refused.join(", ")
                    ),
                ),
                check(
                    &format!("request.operation == 'CREATE' || {}", managed("oldObject")),
                    &format!(
                        "the celld operator changes or deletes only objects it manages (label app.kubernetes.io/managed-by={MANAGER} and a controller owner reference to a CelldFleet or CelldPreview; a preview's fleet: its CelldPreview)"
                    ),
                ),
                check(
                    &format!("request.operation == 'DELETE' || {}", managed("object")),
                    &format!(
                        "the celld operator creates only objects it manages (label app.kubernetes.io/managed-by={MANAGER} and a controller owner reference to a CelldFleet or CelldPreview; a preview's fleet: its CelldPreview)"
                    ),
                ),
                check(
                    &format!(
                        "{pod} == null || ({pod}.?automountServiceAccountToken.orValue(true) == false && \
                         !{pod}.?volumes.orValue([]).exists(v, has(v.projected) && v.projected.?sources.orValue([]).exists(s, has(s.serviceAccountToken))))"
                    ),
                    "the celld operator's pods mount no ServiceAccount token: set automountServiceAccountToken: false",
                ),
                check(
                    &format!(
                        "{pod} == null || (!{pod}.?hostNetwork.orValue(false) && !{pod}.?hostPID.orValue(false) && !{pod}.?hostIPC.orValue(false) && \
                         !{pod}.?volumes.orValue([]).exists(v, has(v.hostPath)))"
                    ),
                    "the celld operator's pods use no host network, PID, IPC or hostPath volume",
                ),
                check(
                    &format!(
                        "{pod} == null || !({containers}).exists(c, c.?securityContext.?privileged.orValue(false) || c.?securityContext.?allowPrivilegeEscalation.orValue(false))"
                    ),
                    "the celld operator's pods run no privileged container and allow no privilege escalation",
                ),
            ]),
            ..ValidatingAdmissionPolicySpec::default()
        }),
        status: None,
    }
}

fn meta(subject: &Subject) -> ObjectMeta {
    ObjectMeta {
        name: Some(subject.policy_name()),
        labels: Some(BTreeMap::from([(
            "app.kubernetes.io/name".to_string(),
            MANAGER.to_string(),
        )])),
        ..ObjectMeta::default()
    }
}

/// The binding of [`policy`] for `subject`: every namespace, refusing.
pub fn binding(subject: &Subject) -> ValidatingAdmissionPolicyBinding {
    ValidatingAdmissionPolicyBinding {
        metadata: meta(subject),
        spec: Some(ValidatingAdmissionPolicyBindingSpec {
            policy_name: Some(subject.policy_name()),
            validation_actions: Some(vec!["Deny".to_string()]),
            ..ValidatingAdmissionPolicyBindingSpec::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operator() -> Subject {
        Subject::ServiceAccount {
            namespace: "celld-system".into(),
            name: "celld-operator".into(),
        }
    }

    #[test]
    fn it_judges_only_the_operator_and_covers_every_child_kind_and_jobs() {
        let spec = policy(&operator()).spec.unwrap();
        let conditions = spec.match_conditions.unwrap();
        assert_eq!(
            conditions[0].expression,
            "request.userInfo.username == 'system:serviceaccount:celld-system:celld-operator'"
        );
        let covered: Vec<String> = spec
            .match_constraints
            .unwrap()
            .resource_rules
            .unwrap()
            .into_iter()
            .flat_map(|r| r.resources.unwrap_or_default())
            .collect();
        for kind in ChildCaches::kinds() {
            assert!(covered.contains(&kind.plural), "{}", kind.plural);
        }
        assert!(covered.contains(&"jobs".to_string()));
        assert!(covered.contains(&"celldfleets".to_string()));
        assert!(!covered.contains(&"pods".to_string()), "never written");
    }

    #[test]
    fn the_operator_namespace_and_the_system_ones_are_refused() {
        let spec = policy(&operator()).spec.unwrap();
        let namespaced = &spec.variables.unwrap()[0].expression;
        for ns in [
            "kube-system",
            "kube-public",
            "kube-node-lease",
            "celld-system",
        ] {
            assert!(namespaced.contains(&format!("'{ns}'")), "{namespaced}");
        }
        let tests = policy(&Subject::AnyServiceAccountNamed {
            name: "celld-operator".into(),
            home: "celld-system".into(),
        });
        assert_eq!(
            tests.spec.unwrap().validations,
            spec.validations,
            "the test suite's guard checks the same things"
        );
    }
}
