//! Client-side check of a CRD schema's size bounds (maxLength, maxItems, maxProperties), which
//! kube's client-side CEL validation does not evaluate. The API server reports these before any
//! CEL rule, and skips the rules when one is broken; [`crate::validate`] does the same.

use serde_json::Value;

/// One rule an object breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Path of the field the rule sits on, e.g. `spec.ingress`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// Every size bound of `schema` that `value` (at `path`) breaks, in the API server's words.
pub fn violations(schema: &Value, value: &Value, path: &str) -> Vec<Violation> {
    let mut out = Vec::new();
    walk(schema, value, path, &mut out);
    out
}

fn bound(schema: &Value, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

fn too_many(path: &str, count: usize, max: u64) -> Violation {
    Violation {
        field: path.to_string(),
        message: format!("{path}: Too many: {count}: must have at most {max} items"),
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn walk(schema: &Value, value: &Value, path: &str, out: &mut Vec<Violation>) {
    match value {
        Value::String(s) => {
            let length = s.chars().count();
            if let Some(max) = bound(schema, "maxLength").filter(|max| length as u64 > *max) {
                out.push(Violation {
                    field: path.to_string(),
                    message: format!("{path}: Too long: may not be more than {max} bytes"),
                });
            }
        }
        Value::Array(items) => {
            if let Some(max) = bound(schema, "maxItems").filter(|max| items.len() as u64 > *max) {
                out.push(too_many(path, items.len(), max));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    walk(item_schema, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            if additional.is_some()
                && let Some(max) =
                    bound(schema, "maxProperties").filter(|max| fields.len() as u64 > *max)
            {
                out.push(too_many(path, fields.len(), max));
            }
            for (name, field) in fields {
                let field_schema = properties.and_then(|p| p.get(name)).or(additional);
                if let Some(field_schema) = field_schema {
                    walk(field_schema, field, &child(path, name), out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::violations;
    use serde_json::json;

    #[test]
    fn reports_every_broken_bound_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "labels": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string", "maxLength": 3}},
                "names": {"type": "array", "maxItems": 1, "items": {"type": "string", "maxLength": 2}},
            },
        });
        let value = json!({"labels": {"a": "日本語", "b": "long"}, "names": ["ok", "bad"]});
        let messages: Vec<String> = violations(&schema, &value, "spec")
            .into_iter()
            .map(|v| v.message)
            .collect();
        assert_eq!(
            messages,
            vec![
                "spec.labels: Too many: 2: must have at most 1 items",
                "spec.labels.b: Too long: may not be more than 3 bytes",
                "spec.names: Too many: 2: must have at most 1 items",
                "spec.names[1]: Too long: may not be more than 2 bytes",
            ]
        );
    }
}
