//! An optional ValidatingAdmissionPolicy for clusters shared by tenants: every fleet's bucket
//! prefix (and its previews' bucket prefix) must start with the fleet's namespace, so the
//! tenants of one bucket cannot even ask for each other's prefixes. The operator's prefix
//! claims already keep a second claimant off a prefix; this makes the first claim predictable.
//! Not part of the installs: `config/optional/prefix-by-namespace.yaml`.

use crate::fleet::CelldFleet;
use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, Validation, Variable,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;

/// The name of the policy and of its binding.
pub const NAME: &str = "celld-prefix-by-namespace";

/// The first segment of the prefix of the bucket URL `url` (a CEL string), or '' without one.
fn first_segment(url: &str) -> String {
    let parts = format!(
        "({url}.contains('://') ? {url}.substring({url}.indexOf('://') + 3) : {url}).split('/')"
    );
    format!("({parts}.size() > 1 ? {parts}[1] : '')")
}

fn check(expression: &str, message: &str) -> Validation {
    Validation {
        expression: expression.to_string(),
        message_expression: Some(message.to_string()),
        reason: Some("Invalid".to_string()),
        ..Validation::default()
    }
}

/// The policy: CelldFleet creates and updates.
pub fn policy() -> ValidatingAdmissionPolicy {
    ValidatingAdmissionPolicy {
        metadata: ObjectMeta {
            name: Some(NAME.to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".to_string()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![NamedRuleWithOperations {
                    api_groups: Some(vec![CelldFleet::group(&()).into_owned()]),
                    api_versions: Some(vec![CelldFleet::version(&()).into_owned()]),
                    operations: Some(vec!["CREATE".to_string(), "UPDATE".to_string()]),
                    resources: Some(vec!["celldfleets".to_string()]),
                    ..NamedRuleWithOperations::default()
                }]),
                ..MatchResources::default()
            }),
            variables: Some(vec![
                Variable {
                    name: "bucket".into(),
                    expression: first_segment("object.spec.objectStorage.bucket"),
                },
                Variable {
                    name: "previews".into(),
                    expression: format!(
                        "has(object.spec.previews) ? {} : request.namespace",
                        first_segment("object.spec.previews.bucket")
                    ),
                },
            ]),
            validations: Some(vec![
                check(
                    "variables.bucket == request.namespace",
                    "'spec.objectStorage.bucket: in this cluster a fleet\\'s bucket prefix starts with its namespace: write it as ' + (object.spec.objectStorage.bucket.contains('://') ? object.spec.objectStorage.bucket.split('://')[0] + '://' : '') + 'NAME/' + request.namespace + '/...'",
                ),
                check(
                    "variables.previews == request.namespace",
                    "'spec.previews.bucket: in this cluster the previews\\' bucket prefix starts with the fleet\\'s namespace: write it as NAME/' + request.namespace + '/...'",
                ),
            ]),
            ..ValidatingAdmissionPolicySpec::default()
        }),
        status: None,
    }
}

/// The binding: every namespace, refusing.
pub fn binding() -> ValidatingAdmissionPolicyBinding {
    ValidatingAdmissionPolicyBinding {
        metadata: ObjectMeta {
            name: Some(NAME.to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(ValidatingAdmissionPolicyBindingSpec {
            policy_name: Some(NAME.to_string()),
            validation_actions: Some(vec!["Deny".to_string()]),
            ..ValidatingAdmissionPolicyBindingSpec::default()
        }),
    }
}
