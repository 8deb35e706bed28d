//! Reading a fleet's conditions, typed or as JSON.

use celld_api::CelldFleet;
use serde_json::Value;

/// Whether the typed fleet's condition `type_` has `status` (and `reason`, if given).
pub fn has(fleet: &CelldFleet, type_: &str, status: &str, reason: Option<&str>) -> bool {
    fleet
        .status
        .as_ref()
        .and_then(|s| celld_api::conditions::find(&s.conditions, type_))
        .is_some_and(|c| c.status == status && reason.is_none_or(|r| c.reason == r))
}

/// The condition `type_` of a fleet or store manifest, as JSON.
pub fn find<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Whether the JSON object's condition `type_` has `status`.
pub fn json_has(object: &Value, type_: &str, status: &str) -> bool {
    find(object, type_).is_some_and(|c| c["status"] == status)
}

/// `Type=Status/Reason` for every condition of a JSON object, for failure messages.
pub fn summary(object: &Value) -> String {
    match object["status"]["conditions"].as_array() {
        Some(conditions) if !conditions.is_empty() => conditions
            .iter()
            .map(|c| {
                format!(
                    "{}={}/{}",
                    c["type"].as_str().unwrap_or("?"),
                    c["status"].as_str().unwrap_or("?"),
                    c["reason"].as_str().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => "no conditions".to_string(),
    }
}

/// The same summary for a typed fleet.
pub fn typed_summary(fleet: &CelldFleet) -> String {
    summary(&serde_json::to_value(fleet).unwrap_or_default())
}
