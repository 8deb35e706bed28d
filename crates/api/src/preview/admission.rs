//! The ValidatingAdmissionPolicy that checks a CelldPreview against its fleet, which the
//! preview's own CEL rules cannot see: the fleet must allow previews, give them credentials of
//! their own (or allow its own to be shared), and allow a source that chooses its deploy image;
//! the TTL must be within its maximum, and the name must not be another fleet's. The binding hands the policy every
//! CelldFleet of the preview's namespace as a parameter (selector `{}`), and the API server
//! evaluates each expression once per fleet: an expression only judges the fleet it is about.
//! A namespace without fleets admits the preview, as does a preview whose fleet does not exist
//! yet (its Ready condition then says so).

use crate::fleet::CelldFleet;
use crate::labels;
use crate::preview::CelldPreview;
use k8s_openapi::api::admissionregistration::v1::{
    MatchResources, NamedRuleWithOperations, ParamKind, ParamRef, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, Validation,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::Resource;

/// The name of the policy and of its binding.
pub const NAME: &str = "celld-previews";

/// One check: a CEL expression over `object` (the preview) and `params` (one fleet of its
/// namespace), and the message naming the field and the fix.
fn check(expression: &str, message: &str) -> Validation {
    Validation {
        expression: expression.to_string(),
        message_expression: Some(message.to_string()),
        reason: Some("Invalid".to_string()),
        ..Validation::default()
    }
}

/// The checks, each true for every fleet other than the one it is about.
pub fn validations() -> Vec<Validation> {
    let parent = "params.metadata.name != object.spec.fleet";
    vec![
        check(
            &format!("{parent} || has(params.spec.previews)"),
            "'spec.fleet: CelldFleet ' + params.metadata.name + ' does not allow previews: set its spec.previews (baseDomain, bucket, and ingressClass or gatewayRefs), or name a fleet that has them'",
        ),
        check(
            &format!(
                "{parent} || !has(params.spec.previews) || !has(object.spec.ttl) || duration(object.spec.ttl) <= duration(params.spec.previews.maxTtl)"
            ),
            "'spec.ttl: ' + object.spec.ttl + ' is longer than the ' + params.spec.previews.maxTtl + ' CelldFleet ' + params.metadata.name + ' allows (spec.previews.maxTtl): ask for less, or raise the fleet\\'s maxTtl'",
        ),
        check(
            &format!(
                "{parent} || !has(params.spec.previews) || has(params.spec.previews.credentials) || (has(params.spec.previews.shareCredentials) && params.spec.previews.shareCredentials)"
            ),
            "'spec.fleet: CelldFleet ' + params.metadata.name + ' gives its previews no credentials of their own, and its own reach its production prefix: set its spec.previews.credentials, or accept the risk with spec.previews.shareCredentials: true'",
        ),
        check(
            &format!(
                "{parent} || !has(params.spec.previews) || !has(object.spec.source) || (!has(object.spec.source.deployerImage) && (!has(object.spec.source.image) || !has(object.spec.source.image.layout) || object.spec.source.image.layout != 'Deployer')) || (has(params.spec.previews.allowSourceDeployer) && params.spec.previews.allowSourceDeployer)"
            ),
            "'spec.source: deployerImage and image.layout Deployer choose the image of the deploy Job, which runs with the previews\\' bucket credentials, and CelldFleet ' + params.metadata.name + ' does not allow it: remove them, or set the fleet\\'s spec.previews.allowSourceDeployer: true'",
        ),
        check(
            &format!(
                "params.metadata.name != object.metadata.name || (has(params.metadata.labels) && '{label}' in params.metadata.labels && params.metadata.labels['{label}'] == object.metadata.name)",
                label = labels::PREVIEW
            ),
            "'metadata.name: a CelldFleet named ' + object.metadata.name + ' already exists in this namespace, and a preview serves from a fleet of its own name: choose another name for the preview'",
        ),
    ]
}

/// The policy: CelldPreview creates and updates, against every fleet of their namespace.
pub fn policy() -> ValidatingAdmissionPolicy {
    ValidatingAdmissionPolicy {
        metadata: ObjectMeta {
            name: Some(NAME.to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".to_string()),
            param_kind: Some(ParamKind {
                api_version: Some(CelldFleet::api_version(&()).into_owned()),
                kind: Some("CelldFleet".to_string()),
            }),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![NamedRuleWithOperations {
                    api_groups: Some(vec![CelldPreview::group(&()).into_owned()]),
                    api_versions: Some(vec![CelldPreview::version(&()).into_owned()]),
                    operations: Some(vec!["CREATE".to_string(), "UPDATE".to_string()]),
                    resources: Some(vec!["celldpreviews".to_string()]),
                    ..NamedRuleWithOperations::default()
                }]),
                ..MatchResources::default()
            }),
            validations: Some(validations()),
            ..ValidatingAdmissionPolicySpec::default()
        }),
        status: None,
    }
}

/// The binding: every fleet of the preview's namespace is a parameter; none admits.
pub fn binding() -> ValidatingAdmissionPolicyBinding {
    ValidatingAdmissionPolicyBinding {
        metadata: ObjectMeta {
            name: Some(NAME.to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(ValidatingAdmissionPolicyBindingSpec {
            policy_name: Some(NAME.to_string()),
            param_ref: Some(ParamRef {
                selector: Some(LabelSelector::default()),
                parameter_not_found_action: Some("Allow".to_string()),
                ..ParamRef::default()
            }),
            validation_actions: Some(vec!["Deny".to_string()]),
            ..ValidatingAdmissionPolicyBindingSpec::default()
        }),
    }
}
