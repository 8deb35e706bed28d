//! Size bounds and rules placed inside the schemas of Kubernetes types (Affinity, Toleration,
//! EnvVar, ...), which k8s-openapi generates without any.
//!
//! The API server estimates a CEL rule's cost from the most items, characters and entries the data
//! under it can hold, and refuses a CRD whose rules could cost more than its budget; bounding every
//! list, string and map keeps those estimates small.

use kube::core::Rule;
use serde_json::{Value, json};

/// The bounds [`bound`] sets on every list, string and map that has none.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// maxItems of lists.
    pub items: u64,
    /// maxLength of strings (and of int-or-string values).
    pub length: u64,
    /// maxProperties of maps.
    pub properties: u64,
}

/// Sets `bounds` on every list, string and map at or below `schema` that has no bound of its own,
/// except below the properties named in `unbounded` (which keep whatever they had).
pub fn bound(schema: &mut Value, bounds: Bounds, unbounded: &[&str]) {
    let Some(node) = schema.as_object_mut() else {
        return;
    };
    let int_or_string = node.get("x-kubernetes-int-or-string") == Some(&json!(true));
    let (key, max) = match node.get("type").and_then(Value::as_str) {
        Some("array") => ("maxItems", bounds.items),
        Some("string") => ("maxLength", bounds.length),
        Some("object") if node.contains_key("additionalProperties") => {
            ("maxProperties", bounds.properties)
        }
        None if int_or_string => ("maxLength", bounds.length),
        _ => ("", 0),
    };
    if !key.is_empty() {
        node.entry(key).or_insert(json!(max));
    }
    if let Some(properties) = node.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, child) in properties.iter_mut() {
            if !unbounded.contains(&name.as_str()) {
                bound(child, bounds, unbounded);
            }
        }
    }
    for child in ["items", "additionalProperties"] {
        if let Some(child) = node.get_mut(child) {
            bound(child, bounds, unbounded);
        }
    }
}

/// The schema at `path` below `schema`: each step is a property name, or `[]` for the items of a
/// list.
pub fn at<'a>(schema: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    path.iter().try_fold(schema, |node, step| match *step {
        "[]" => node.get_mut("items"),
        name => node.get_mut("properties")?.get_mut(name),
    })
}

/// Adds `rules` to the `x-kubernetes-validations` of the schema at `path` below `schema`; a path
/// that does not exist is a programming error caught by the tests of the rules.
pub fn add_rules(schema: &mut Value, path: &[&str], rules: &[Rule]) {
    let Some(node) = at(schema, path).and_then(Value::as_object_mut) else {
        return;
    };
    let list = node
        .entry("x-kubernetes-validations")
        .or_insert_with(|| json!([]));
    if let Some(list) = list.as_array_mut() {
        list.extend(rules.iter().filter_map(|r| serde_json::to_value(r).ok()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_only_what_has_no_bound_and_skips_the_unbounded() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "names": {"type": "array", "maxItems": 3, "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "value": {"type": "string"},
                "divisor": {"x-kubernetes-int-or-string": true},
            },
        });
        bound(
            &mut schema,
            Bounds {
                items: 8,
                length: 64,
                properties: 16,
            },
            &["value"],
        );
        let p = &schema["properties"];
        assert_eq!(p["names"]["maxItems"], json!(3));
        assert_eq!(p["names"]["items"]["maxLength"], json!(64));
        assert_eq!(p["labels"]["maxProperties"], json!(16));
        assert_eq!(p["labels"]["additionalProperties"]["maxLength"], json!(64));
        assert_eq!(p["value"].get("maxLength"), None);
        assert_eq!(p["divisor"]["maxLength"], json!(64));
    }

    #[test]
    fn adds_rules_at_a_path_through_lists() {
        let mut schema = json!({
            "type": "object",
            "properties": {"terms": {"type": "array", "items": {"type": "object"}}},
        });
        add_rules(&mut schema, &["terms", "[]"], &[Rule::new("true")]);
        assert_eq!(
            schema["properties"]["terms"]["items"]["x-kubernetes-validations"][0]["rule"],
            json!("true")
        );
    }
}
