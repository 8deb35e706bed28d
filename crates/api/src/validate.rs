//! Client-side validation of whole objects with exactly the size bounds and CEL rules the API
//! server enforces.

pub use crate::schema_bounds::Violation;
use crate::{CelldFleet, CelldObjectStore, CelldPreview, CelldRollout};
use kube::CustomResourceExt;
use kube::core::cel::ValidationErrors;
use serde::Serialize;
use std::fmt;

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

/// Checks a preview against the CRD's size bounds and CEL rules, as admission would on create
/// (without the admission policy's checks against its fleet).
pub fn preview(preview: &CelldPreview) -> Result<(), SpecError> {
    bounds(preview)?;
    preview.validate_cel().map_err(SpecError::from)
}

/// Checks an update of a preview against the CRD's size bounds and CEL rules, transition
/// rules included.
pub fn preview_update(preview: &CelldPreview, old: &CelldPreview) -> Result<(), SpecError> {
    bounds(preview)?;
    preview.validate_cel_update(old).map_err(SpecError::from)
}

/// Checks a rollout against the CRD's size bounds and CEL rules, as admission would on create.
pub fn rollout(rollout: &CelldRollout) -> Result<(), SpecError> {
    bounds(rollout)?;
    rollout.validate_cel().map_err(SpecError::from)
}
