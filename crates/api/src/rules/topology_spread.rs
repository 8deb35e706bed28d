//! spec.topologySpreadConstraints: the spread constraints Kubernetes accepts in a pod.

use super::bounds::{self, Bounds};
use super::{label_selector, names};
use kube::core::Rule;
use schemars::Schema;

const AT: &str = "spec.topologySpreadConstraints";

/// Schema transform of spec.topologySpreadConstraints: bounds on every list, string and map of
/// a constraint (the list has maxItems already), the rules of the list and of each constraint's
/// labelSelector.
pub fn schema(schema: &mut Schema) {
    if let Some(root) = schema.pointer_mut("") {
        bounds::bound(
            root,
            Bounds {
                items: 8,
                length: 317,
                properties: 32,
            },
            &[],
        );
        bounds::add_rules(root, &[], &rules());
        label_selector::add(
            root,
            &["[]", "labelSelector"],
            &format!("{AT}[*].labelSelector"),
        );
    }
}

fn rules() -> Vec<Rule> {
    vec![
        Rule::new("self.all(c, c.maxSkew >= 1)").message(
            format!("{AT}: maxSkew must be at least 1 (the most the number of pods may differ between two domains)").as_str(),
        ),
        Rule::new(format!("self.all(c, {})", names::is_qualified_name("c.topologyKey"))).message(
            format!("{AT}: topologyKey must be a node label key such as topology.kubernetes.io/zone or kubernetes.io/hostname, {}", names::QUALIFIED_NAME_HELP).as_str(),
        ),
        Rule::new("self.all(c, c.whenUnsatisfiable in ['DoNotSchedule', 'ScheduleAnyway'])").message(
            format!("{AT}: whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway").as_str(),
        ),
        Rule::new("self.all(c, !has(c.minDomains) || (c.whenUnsatisfiable == 'DoNotSchedule' && c.minDomains >= 1))").message(
            format!("{AT}: minDomains applies to whenUnsatisfiable DoNotSchedule only and must be at least 1: remove minDomains or set whenUnsatisfiable: DoNotSchedule").as_str(),
        ),
        Rule::new("self.all(c, (!has(c.nodeAffinityPolicy) || c.nodeAffinityPolicy in ['Honor', 'Ignore']) && (!has(c.nodeTaintsPolicy) || c.nodeTaintsPolicy in ['Honor', 'Ignore']))").message(
            format!("{AT}: nodeAffinityPolicy and nodeTaintsPolicy must be Honor or Ignore").as_str(),
        ),
        Rule::new(format!("self.all(c, !has(c.matchLabelKeys) || (has(c.labelSelector) && c.matchLabelKeys.all(k, {})))", names::is_qualified_name("k"))).message(
            format!("{AT}: matchLabelKeys needs a labelSelector, and each key must be a label key, {}", names::QUALIFIED_NAME_HELP).as_str(),
        ),
        Rule::new(format!("self.all(c, !has(c.matchLabelKeys) || !has(c.labelSelector) || c.matchLabelKeys.all(k, !{}))", label_selector::selects_on("c.labelSelector", "k"))).message(
            format!("{AT}: a key of matchLabelKeys may not also be in the constraint's labelSelector: remove it from one of them").as_str(),
        ),
        Rule::new("self.all(a, self.exists_one(b, b.topologyKey == a.topologyKey && b.whenUnsatisfiable == a.whenUnsatisfiable))").message(
            format!("{AT}: two constraints have the same topologyKey and whenUnsatisfiable; merge them").as_str(),
        ),
    ]
}
