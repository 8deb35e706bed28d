//! Labels, node selectors and annotations: the keys, values and sizes Kubernetes accepts in an
//! object's metadata (and in a pod's nodeSelector).

use super::names;
use crate::labels;
use kube::core::Rule;
use schemars::Schema;
use serde_json::{Value, json};

/// Most labels (or nodeSelector entries) a fleet may set on its pods.
pub const MAX_LABELS: u64 = 64;

/// Most annotations a fleet may set on one object.
pub const MAX_ANNOTATIONS: u64 = 64;

/// Bytes of annotation keys and values Kubernetes accepts on one object (256 KiB).
pub const KUBERNETES_ANNOTATIONS_BYTES: u64 = 256 * 1024;

/// Bytes the operator keeps for the annotations it adds itself (configuration hash, ingress-nginx
/// rewrite, cert-manager issuer).
pub const OPERATOR_ANNOTATIONS_BYTES: u64 = 1024;

/// Bytes of keys and values a fleet's annotations on one object may total.
pub const MAX_ANNOTATIONS_BYTES: u64 = KUBERNETES_ANNOTATIONS_BYTES - OPERATOR_ANNOTATIONS_BYTES;

/// Schema transform of a label map (podLabels, nodeSelector): at most [`MAX_LABELS`] entries,
/// values of at most 63 characters.
pub fn label_map_bounds(schema: &mut Schema) {
    schema.insert("maxProperties".into(), json!(MAX_LABELS));
    if let Some(values) = schema
        .get_mut("additionalProperties")
        .and_then(Value::as_object_mut)
    {
        values.insert("maxLength".into(), json!(63));
    }
}

/// Schema transform of an annotation map: at most [`MAX_ANNOTATIONS`] entries, no value longer
/// than all annotations together may be.
pub fn annotation_map_bounds(schema: &mut Schema) {
    schema.insert("maxProperties".into(), json!(MAX_ANNOTATIONS));
    if let Some(values) = schema
        .get_mut("additionalProperties")
        .and_then(Value::as_object_mut)
    {
        values.insert("maxLength".into(), json!(MAX_ANNOTATIONS_BYTES));
    }
}

/// Rule: every key of a label map is a qualified name.
pub fn label_keys_rule(at: &str) -> Rule {
    Rule::new(format!("self.all(k, {})", names::is_qualified_name("k"))).message(
        format!(
            "{at} keys must be {}, for example app.kubernetes.io/name or team",
            names::QUALIFIED_NAME_HELP
        )
        .as_str(),
    )
}

/// Rule: every value of a label map is a label value.
pub fn label_values_rule(at: &str) -> Rule {
    Rule::new(format!("self.all(k, {})", names::is_label_value("self[k]")))
        .message(format!("{at} values must be {}", names::LABEL_VALUE_HELP).as_str())
}

/// Rule: every key of an annotation map is a qualified name (any letter case in the prefix).
pub fn annotation_keys_rule(at: &str) -> Rule {
    Rule::new(format!("self.all(k, {})", names::is_annotation_key("k"))).message(
        format!(
            "{at} keys must be {}, for example example.com/owner",
            names::QUALIFIED_NAME_HELP
        )
        .as_str(),
    )
}

/// Rule: the keys and values of an annotation map total at most [`MAX_ANNOTATIONS_BYTES`] bytes.
pub fn annotations_size_rule(at: &str) -> Rule {
    Rule::new(format!(
        "self.map(k, size(k) + size(bytes(self[k]))).sum() <= {MAX_ANNOTATIONS_BYTES}"
    ))
    .message(
        format!(
            "{at} keys and values may total at most {MAX_ANNOTATIONS_BYTES} bytes: Kubernetes accepts 256 KiB of annotations per object and the operator adds its own; shorten or remove annotations"
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
