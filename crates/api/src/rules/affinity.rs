//! spec.affinity: the node and pod affinity Kubernetes accepts in a pod.

use super::bounds::{self, Bounds};
use super::{label_selector, names};
use kube::core::Rule;
use schemars::Schema;
use serde_json::{Value, json};

const NODE_REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";

/// Schema transform of spec.affinity: bounds on every list, string and map, and the rules of node
/// selector terms, pod affinity terms and weights.
pub fn schema(schema: &mut Schema) {
    let Some(root) = schema.pointer_mut("") else {
        return;
    };
    bounds::bound(
        root,
        Bounds {
            items: 8,
            length: 317,
            properties: 32,
        },
        &[],
    );
    node_affinity(root);
    for kind in ["podAffinity", "podAntiAffinity"] {
        let at = format!("spec.affinity.{kind}");
        pod_affinity_term(
            root,
            &[kind, NODE_REQUIRED, "[]"],
            &format!("{at}.{NODE_REQUIRED}[*]"),
        );
        pod_affinity_term(
            root,
            &[kind, PREFERRED, "[]", "podAffinityTerm"],
            &format!("{at}.{PREFERRED}[*].podAffinityTerm"),
        );
        bounds::add_rules(
            root,
            &[kind, PREFERRED, "[]"],
            &[weight_rule(&format!("{at}.{PREFERRED}"))],
        );
    }
}

fn node_affinity(root: &mut Value) {
    let at = "spec.affinity.nodeAffinity";
    bounds::add_rules(
        root,
        &["nodeAffinity", NODE_REQUIRED],
        &[Rule::new("size(self.nodeSelectorTerms) > 0").message(
            format!("{at}.{NODE_REQUIRED}.nodeSelectorTerms needs at least one term: add a term or remove {NODE_REQUIRED}").as_str(),
        )],
    );
    node_selector_term(
        root,
        &["nodeAffinity", NODE_REQUIRED, "nodeSelectorTerms", "[]"],
        &format!("{at}.{NODE_REQUIRED}.nodeSelectorTerms[*]"),
    );
    node_selector_term(
        root,
        &["nodeAffinity", PREFERRED, "[]", "preference"],
        &format!("{at}.{PREFERRED}[*].preference"),
    );
    bounds::add_rules(
        root,
        &["nodeAffinity", PREFERRED, "[]"],
        &[weight_rule(&format!("{at}.{PREFERRED}"))],
    );
}

fn weight_rule(at: &str) -> Rule {
    Rule::new("self.weight >= 1 && self.weight <= 100")
        .message(format!("{at}: weight must be between 1 and 100").as_str())
}

/// Most values of a node selector requirement (a list of zones, for example).
pub const NODE_SELECTOR_VALUES: u64 = 32;

fn node_selector_term(root: &mut Value, path: &[&str], at: &str) {
    for list in ["matchExpressions", "matchFields"] {
        if let Some(values) = bounds::at(root, &[path, &[list, "[]", "values"]].concat())
            .and_then(Value::as_object_mut)
        {
            values.insert("maxItems".into(), json!(NODE_SELECTOR_VALUES));
        }
    }
    bounds::add_rules(
        root,
        &[path, &["matchExpressions", "[]"]].concat(),
        &[
            Rule::new("self.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']").message(
                format!("{at}.matchExpressions: operator must be In, NotIn, Exists, DoesNotExist, Gt or Lt").as_str(),
            ),
            Rule::new("self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : self.operator in ['Gt', 'Lt'] ? (has(self.values) && size(self.values) == 1 && self.values[0].matches('^-?[0-9]{1,18}$')) : (!has(self.values) || size(self.values) == 0)").message(
                format!("{at}.matchExpressions: operators In and NotIn need values, Gt and Lt exactly one integer value, Exists and DoesNotExist none").as_str(),
            ),
            Rule::new(names::is_qualified_name("self.key")).message(
                format!("{at}.matchExpressions: key must be a node label key, {}", names::QUALIFIED_NAME_HELP).as_str(),
            ),
        ],
    );
    bounds::add_rules(
        root,
        &[path, &["matchFields", "[]"]].concat(),
        &[Rule::new(format!("self.key == 'metadata.name' && self.operator in ['In', 'NotIn'] && has(self.values) && size(self.values) == 1 && self.values[0].matches('{}')", names::DNS_SUBDOMAIN)).message(
            format!("{at}.matchFields: the only field is metadata.name, with operator In or NotIn and exactly one node name as value").as_str(),
        )],
    );
}

fn pod_affinity_term(root: &mut Value, path: &[&str], at: &str) {
    bounds::add_rules(
        root,
        path,
        &[
            Rule::new(names::is_qualified_name("self.topologyKey")).message(
                format!("{at}: topologyKey must be a node label key such as kubernetes.io/hostname or topology.kubernetes.io/zone, {}", names::QUALIFIED_NAME_HELP).as_str(),
            ),
            Rule::new(format!("!has(self.namespaces) || self.namespaces.all(n, n.matches('{}'))", names::DNS_LABEL)).message(
                format!("{at}: namespaces must be namespace names (DNS labels of at most 63 lowercase letters, digits and '-')").as_str(),
            ),
            Rule::new(format!(
                "(!has(self.matchLabelKeys) || (has(self.labelSelector) && self.matchLabelKeys.all(k, {}))) && (!has(self.mismatchLabelKeys) || (has(self.labelSelector) && self.mismatchLabelKeys.all(k, {})))",
                names::is_qualified_name("k"),
                names::is_qualified_name("k")
            ))
            .message(
                format!("{at}: matchLabelKeys and mismatchLabelKeys need a labelSelector, and each key must be a label key, {}", names::QUALIFIED_NAME_HELP).as_str(),
            ),
            Rule::new(format!(
                "!has(self.labelSelector) || ((!has(self.matchLabelKeys) || self.matchLabelKeys.all(k, !{in_selector} && (!has(self.mismatchLabelKeys) || !(k in self.mismatchLabelKeys)))) && (!has(self.mismatchLabelKeys) || self.mismatchLabelKeys.all(k, !{in_selector})))",
                in_selector = label_selector::selects_on("self.labelSelector", "k"),
            ))
            .message(
                format!("{at}: a key may be in only one of matchLabelKeys, mismatchLabelKeys and the labelSelector: remove it from the others").as_str(),
            ),
        ],
    );
    label_selector::add(
        root,
        &[path, &["labelSelector"]].concat(),
        &format!("{at}.labelSelector"),
    );
    label_selector::add(
        root,
        &[path, &["namespaceSelector"]].concat(),
        &format!("{at}.namespaceSelector"),
    );
}
