//! Label selectors (of pod affinity terms and topology spread constraints): the requirements
//! and labels Kubernetes accepts in a pod's selectors.

use super::bounds;
use super::names;
use kube::core::Rule;
use serde_json::{Value, json};

/// Adds the label-selector rules to the LabelSelector schema at `path` below `root`, and bounds
/// its values to the 63 characters of a label value (which keeps the cost of checking them low);
/// `at` names the selector in messages, for example
/// `spec.topologySpreadConstraints[*].labelSelector`.
pub fn add(root: &mut Value, path: &[&str], at: &str) {
    let requirement = [path, &["matchExpressions", "[]"]].concat();
    bounds::add_rules(root, &requirement, &requirement_rules(at));
    let values = [&requirement[..], &["values", "[]"]].concat();
    if let Some(values) = bounds::at(root, &values).and_then(Value::as_object_mut) {
        values.insert("maxLength".into(), json!(LABEL_VALUE_LENGTH));
    }
    let labels = [path, &["matchLabels"]].concat();
    bounds::add_rules(root, &labels, &match_labels_rules(at));
    if let Some(values) = bounds::at(root, &labels)
        .and_then(|l| l.get_mut("additionalProperties"))
        .and_then(Value::as_object_mut)
    {
        values.insert("maxLength".into(), json!(LABEL_VALUE_LENGTH));
    }
}

/// CEL: the label key `key` is one the label selector `selector` selects on.
pub fn selects_on(selector: &str, key: &str) -> String {
    format!(
        "((has({selector}.matchLabels) && {key} in {selector}.matchLabels) || (has({selector}.matchExpressions) && {selector}.matchExpressions.exists(e, e.key == {key})))"
    )
}

/// The longest label value.
const LABEL_VALUE_LENGTH: u64 = 63;

fn requirement_rules(at: &str) -> Vec<Rule> {
    vec![
        Rule::new("self.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist']").message(
            format!("{at}.matchExpressions: operator must be In, NotIn, Exists or DoesNotExist")
                .as_str(),
        ),
        Rule::new("self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)").message(
            format!("{at}.matchExpressions: operators In and NotIn need values, Exists and DoesNotExist take none").as_str(),
        ),
        Rule::new(names::is_qualified_name("self.key")).message(
            format!("{at}.matchExpressions: key must be a label key, {}", names::QUALIFIED_NAME_HELP).as_str(),
        ),
        Rule::new(format!("!has(self.values) || self.values.all(v, {})", names::is_label_value("v"))).message(
            format!("{at}.matchExpressions: values must be label values, {}", names::LABEL_VALUE_HELP).as_str(),
        ),
    ]
}

fn match_labels_rules(at: &str) -> Vec<Rule> {
    vec![
        Rule::new(format!("self.all(k, {})", names::is_qualified_name("k"))).message(
            format!(
                "{at}.matchLabels: keys must be label keys, {}",
                names::QUALIFIED_NAME_HELP
            )
            .as_str(),
        ),
        Rule::new(format!("self.all(k, {})", names::is_label_value("self[k]"))).message(
            format!(
                "{at}.matchLabels: values must be label values, {}",
                names::LABEL_VALUE_HELP
            )
            .as_str(),
        ),
    ]
}
