//! Admission rules shared by several fields, and client-side validation of whole objects with
//! exactly the size bounds and CEL rules the API server enforces.

pub use crate::schema_bounds::Violation;
use crate::{CelldFleet, CelldObjectStore, labels};
use kube::CustomResourceExt;
use kube::core::{Rule, cel::ValidationErrors};
use serde::Serialize;
use std::fmt;

/// Rule: an http:// endpoint needs allowHTTP (`at` is the object's path, for the message).
pub fn allow_http_rule(at: &str) -> Rule {
    Rule::new("!has(self.endpoint) || !self.endpoint.startsWith('http://') || (has(self.allowHTTP) && self.allowHTTP)")
        .message(format!("{at}.endpoint uses plain-text http://: set {at}.allowHTTP: true to allow it, or use an https:// endpoint").as_str())
}

/// Rule: an endpoint is an absolute http(s) URL without query or fragment.
pub fn endpoint_rule(at: &str) -> Rule {
    Rule::new(r"self.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^?#\\s]*)?$')").message(
        format!("{at} must be an absolute http:// or https:// URL such as https://s3.example.com (host, optional port and path; no query)").as_str(),
    )
}

/// Rule: a region is lowercase letters, digits and dashes (us-east-1, auto).
pub fn region_rule(at: &str) -> Rule {
    Rule::new("self.matches('^[a-z0-9-]+$')")
        .message(format!("{at} must be a region name such as us-east-1 (or auto for R2)").as_str())
}

/// Rule: a bucket is `[s3://|gs://|az://]NAME[/PREFIX]` (no scheme is S3, as in celld) with a
/// bucket or container name valid for its store and celld's prefix characters.
pub fn bucket_rule(at: &str) -> Rule {
    const PREFIX: &str = "(/[A-Za-z0-9._-]+)*$";
    Rule::new(format!(
        "self.matches('^(s3://)?[a-z0-9][a-z0-9.-]{{1,61}}[a-z0-9]{PREFIX}') \
         || self.matches('^gs://[a-z0-9][a-z0-9._-]{{1,61}}[a-z0-9]{PREFIX}') \
         || (self.matches('^az://[a-z0-9](-?[a-z0-9]){{2,62}}{PREFIX}') && self.matches('^az://[^/]{{3,63}}(/|$)'))"
    ))
    .message(
        format!("{at} must be [s3://|gs://|az://]NAME[/PREFIX] (no scheme means S3): NAME is an S3 or GCS bucket name (3-63 lowercase letters, digits, '.', '-'; GCS also '_') or an Azure container name (3-63 lowercase letters, digits and single '-'), PREFIX uses A-Z a-z 0-9 - _ . and / between non-empty parts, for example s3://company-celld/api, gs://company-celld/api or az://celld/api").as_str(),
    )
}

/// Rule on an object with a `bucket`: its S3-only `field` is not set with a gs:// or az://
/// bucket (`at` is the object's path, for the message).
pub fn s3_only_rule(at: &str, field: &str) -> Rule {
    Rule::new(format!(
        "!(self.bucket.startsWith('gs://') || self.bucket.startsWith('az://')) || !has(self.{field})"
    ))
    .message(
        format!("{at}.{field} applies to S3 buckets only: celld refuses it with gs:// and az:// buckets, so remove {at}.{field}").as_str(),
    )
}

/// Rule: an Azure storage account name is 3-24 lowercase letters and digits.
pub fn azure_account_rule(at: &str) -> Rule {
    Rule::new("self.matches('^[a-z0-9]{3,24}$')").message(
        format!("{at} must be an Azure storage account name: 3-24 lowercase letters and digits, such as companycelld").as_str(),
    )
}

/// Rule: no environment variable the operator sets itself.
pub fn reserved_env_rule() -> Rule {
    let names = labels::RESERVED_ENV
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    Rule::new(format!("self.all(e, !(e.name in [{names}]))")).message(
        format!(
            "spec.env may not set {}: the operator sets them from objectStorage, storeRef and the fleet's pods",
            labels::RESERVED_ENV.join(", ")
        )
        .as_str(),
    )
}

/// Rule: no map key under the operator's platform.celld.dev/ prefix.
pub fn owned_keys_rule(at: &str) -> Rule {
    Rule::new(format!(
        "self.all(k, !k.startsWith('{}'))",
        labels::OWNED_PREFIX
    ))
    .message(
        format!(
            "{at} may not use keys under {}: the operator owns them",
            labels::OWNED_PREFIX
        )
        .as_str(),
    )
}

/// The rules an object breaks, as the API server would report them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SpecError {
    /// Every broken rule.
    pub violations: Vec<Violation>,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<&str> = self.violations.iter().map(|v| v.message.as_str()).collect();
        write!(f, "{}", lines.join("; "))
    }
}

impl From<ValidationErrors> for SpecError {
    fn from(errors: ValidationErrors) -> Self {
        Self {
            violations: errors
                .iter()
                .map(|e| Violation {
                    field: e.field_path.clone(),
                    message: e.message.clone(),
                })
                .collect(),
        }
    }
}

/// The size bounds of `K`'s CRD schema that `object` breaks (see [`crate::schema_bounds`]).
fn bounds<K: CustomResourceExt + Serialize>(object: &K) -> Result<(), SpecError> {
    let crd = K::crd();
    let schema = crd
        .spec
        .versions
        .first()
        .and_then(|v| v.schema.as_ref())
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| serde_json::to_value(s).ok());
    let value = serde_json::to_value(object).ok();
    let violations = match (schema, value) {
        (Some(schema), Some(value)) => crate::schema_bounds::violations(&schema, &value, ""),
        _ => Vec::new(),
    };
    if violations.is_empty() {
        Ok(())
    } else {
        Err(SpecError { violations })
    }
}

/// Checks a fleet against the CRD's size bounds and CEL rules, as admission would on create
/// (a broken size bound, as on the API server, leaves the CEL rules unchecked).
pub fn fleet(fleet: &CelldFleet) -> Result<(), SpecError> {
    bounds(fleet)?;
    fleet.validate_cel().map_err(SpecError::from)
}

/// Checks an update of a fleet against the CRD's size bounds and CEL rules, transition rules
/// included.
pub fn fleet_update(fleet: &CelldFleet, old: &CelldFleet) -> Result<(), SpecError> {
    bounds(fleet)?;
    fleet.validate_cel_update(old).map_err(SpecError::from)
}

/// Checks an object store against the CRD's size bounds and CEL rules, as admission would on
/// create.
pub fn object_store(store: &CelldObjectStore) -> Result<(), SpecError> {
    bounds(store)?;
    store.validate_cel().map_err(SpecError::from)
}
