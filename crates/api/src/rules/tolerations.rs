//! spec.tolerations: the tolerations Kubernetes accepts in a pod.

use super::bounds::{self, Bounds};
use super::names;
use kube::core::Rule;
use schemars::Schema;

const AT: &str = "spec.tolerations";

/// Schema transform of spec.tolerations: bounds on the strings of each toleration (the list has
/// maxItems already) and [`rules`].
pub fn schema(schema: &mut Schema) {
    if let Some(root) = schema.pointer_mut("") {
        bounds::bound(
            root,
            Bounds {
                items: 32,
                length: 317,
                properties: 0,
            },
            &[],
        );
        bounds::add_rules(root, &[], &rules());
    }
}

/// Rules on the list of tolerations.
fn rules() -> Vec<Rule> {
    vec![
        Rule::new("self.all(t, !has(t.operator) || t.operator in ['', 'Equal', 'Exists'])")
            .message(format!("{AT}: operator must be Equal (the default) or Exists").as_str()),
        Rule::new("self.all(t, !has(t.operator) || t.operator != 'Exists' || !has(t.value) || t.value == '')")
            .message(format!("{AT}: a toleration with operator Exists matches every value: remove value, or use operator Equal").as_str()),
        Rule::new("self.all(t, (has(t.key) && t.key != '') || (has(t.operator) && t.operator == 'Exists'))")
            .message(format!("{AT}: a toleration without key matches every taint and needs operator Exists; set key, or operator Exists").as_str()),
        Rule::new(format!("self.all(t, !has(t.key) || t.key == '' || {})", names::is_qualified_name("t.key")))
            .message(format!("{AT}: key must be a taint key, {}, for example node-role.kubernetes.io/edge", names::QUALIFIED_NAME_HELP).as_str()),
        Rule::new(format!("self.all(t, !has(t.value) || {})", names::is_label_value("t.value")))
            .message(format!("{AT}: value must be a taint value, {}", names::LABEL_VALUE_HELP).as_str()),
        Rule::new("self.all(t, !has(t.effect) || t.effect in ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'])")
            .message(format!("{AT}: effect must be NoSchedule, PreferNoSchedule or NoExecute (or empty for every effect)").as_str()),
        Rule::new("self.all(t, !has(t.tolerationSeconds) || (has(t.effect) && t.effect == 'NoExecute'))")
            .message(format!("{AT}: tolerationSeconds applies to effect NoExecute only: set effect: NoExecute or remove tolerationSeconds").as_str()),
    ]
}
