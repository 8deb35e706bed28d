//! spec.resources: the resource names and quantities Kubernetes accepts in a container.

use super::bounds::{self, Bounds};
use super::{names, quantity};
use kube::core::Rule;
use schemars::Schema;

const AT: &str = "spec.resources";

/// Resources a container may request besides huge pages and extended resources.
pub const STANDARD: &[&str] = &["cpu", "memory", "ephemeral-storage"];

/// CEL: `v` (an int-or-string quantity) is a non-negative quantity below 2^63-1.
fn is_quantity(v: &str) -> String {
    quantity::is_quantity(&format!("string({v})"))
}

/// CEL: `k` is a resource name a container may use.
fn is_resource_name(k: &str) -> String {
    let standard: Vec<String> = STANDARD.iter().map(|s| format!("'{s}'")).collect();
    format!(
        "({k} in [{}] || {k}.matches('^hugepages-[0-9]+([KMGTPE]i|[kMGTPE])?$') || ({k}.contains('/') && {} && !{k}.contains('kubernetes.io/') && !{k}.startsWith('requests.')))",
        standard.join(", "),
        names::is_qualified_name(k),
    )
}

/// Schema transform of spec.resources: bounds on claims, on the maps of limits and requests and
/// on their quantities, and the rules of both maps and of the whole.
pub fn schema(schema: &mut Schema) {
    let Some(root) = schema.pointer_mut("") else {
        return;
    };
    bounds::bound(
        root,
        Bounds {
            items: 16,
            length: 64,
            properties: 16,
        },
        &[],
    );
    for map in ["limits", "requests"] {
        let at = format!("{AT}.{map}");
        bounds::add_rules(
            root,
            &[map],
            &[
                Rule::new(format!("self.all(k, {})", is_resource_name("k"))).message(
                    format!("{at}: a resource must be cpu, memory, ephemeral-storage, hugepages-SIZE or an extended resource DOMAIN/NAME outside kubernetes.io, for example nvidia.com/gpu").as_str(),
                ),
                Rule::new(format!("self.all(k, {})", is_quantity("self[k]"))).message(
                    format!("{at}: a quantity must be a non-negative Kubernetes quantity such as 500m, 2, 1.5Gi or 1e3, {}", quantity::HELP).as_str(),
                ),
            ],
        );
    }
    bounds::add_rules(root, &[], &whole_rules());
}

fn whole_rules() -> Vec<Rule> {
    let request = "self.requests[k]";
    let limit = "self.limits[k]";
    let both_valid = format!("{} && {}", is_quantity(request), is_quantity(limit));
    let standard: Vec<String> = STANDARD.iter().map(|s| format!("'{s}'")).collect();
    vec![
        Rule::new("!has(self.claims) || size(self.claims) == 0").message(
            format!("{AT}.claims is not supported: a fleet's pods declare no resourceClaims; remove claims").as_str(),
        ),
        Rule::new(format!(
            "!has(self.requests) || !has(self.limits) || self.requests.all(k, !(k in self.limits) || !({both_valid}) || quantity(string({request})).compareTo(quantity(string({limit}))) <= 0)"
        ))
        .message(
            format!("{AT}: a request may not exceed the limit of the same resource: lower {AT}.requests or raise {AT}.limits").as_str(),
        ),
        Rule::new(format!(
            "!has(self.requests) || self.requests.all(k, k in [{}] || (has(self.limits) && k in self.limits && (!({both_valid}) || quantity(string({request})).compareTo(quantity(string({limit}))) == 0)))",
            standard.join(", ")
        ))
        .message(
            format!("{AT}: huge pages and extended resources cannot be overcommitted: set {AT}.limits equal to {AT}.requests for them").as_str(),
        ),
    ]
}
