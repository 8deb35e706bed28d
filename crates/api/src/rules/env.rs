//! spec.env: the environment variables Kubernetes accepts in a container, and that a server-side
//! apply of the StatefulSet (whose env list is keyed by name) accepts.

use super::bounds::{self, Bounds};
use super::names;
use crate::labels;
use kube::core::Rule;
use schemars::Schema;

const AT: &str = "spec.env";

/// Field paths a variable may read with valueFrom.fieldRef, besides one label or annotation.
pub const FIELD_PATHS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// Resources a variable may read with valueFrom.resourceFieldRef, besides huge pages.
pub const RESOURCE_FIELDS: &[&str] = &[
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
];

/// Divisors of a memory or storage resource (a CPU divisor is 1 or 1m).
const BYTE_DIVISORS: &[&str] = &[
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];

/// The only container of a fleet's pods, which resourceFieldRef.containerName may name.
pub const CONTAINER: &str = "celld";

fn list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// Schema transform of spec.env: bounds on every string but the values (the list has maxItems
/// already) and the rules of the list.
pub fn schema(schema: &mut Schema) {
    if let Some(root) = schema.pointer_mut("") {
        bounds::bound(
            root,
            Bounds {
                items: 16,
                length: 512,
                properties: 16,
            },
            &["value"],
        );
        bounds::add_rules(root, &[], &rules());
    }
}

fn rules() -> Vec<Rule> {
    let field_ref = "e.valueFrom.fieldRef";
    let resource_ref = "e.valueFrom.resourceFieldRef";
    let subscript = format!(
        r"^metadata[.]labels\\['{}'\\]$",
        names::qualified_name_body()
    );
    let annotation_subscript = format!(
        r"^metadata[.]annotations\\['{}'\\]$",
        names::annotation_key_body()
    );
    vec![
        Rule::new("self.all(e, e.name.matches('^[-._a-zA-Z][-._a-zA-Z0-9]*$'))").message(
            format!("{AT}: a name must start with a letter, '-', '_' or '.' and contain only letters, digits, '-', '_' and '.', for example RUST_LOG").as_str(),
        ),
        Rule::new("self.all(e, self.exists_one(f, f.name == e.name))").message(
            format!("{AT}: each name may appear once: remove or rename the duplicate").as_str(),
        ),
        Rule::new("self.all(e, !has(e.valueFrom) || !has(e.value) || e.value == '')").message(
            format!("{AT}: a variable takes value or valueFrom, not both: remove one").as_str(),
        ),
        Rule::new("self.all(e, !has(e.valueFrom) || (has(e.valueFrom.fieldRef) ? 1 : 0) + (has(e.valueFrom.resourceFieldRef) ? 1 : 0) + (has(e.valueFrom.configMapKeyRef) ? 1 : 0) + (has(e.valueFrom.secretKeyRef) ? 1 : 0) == 1)").message(
            format!("{AT}: valueFrom needs exactly one of fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef").as_str(),
        ),
        Rule::new(format!(
            "self.all(e, !has(e.valueFrom) || !has({field_ref}) || ((!has({field_ref}.apiVersion) || {field_ref}.apiVersion == 'v1') && ({field_ref}.fieldPath in {} || {field_ref}.fieldPath.matches(\"{subscript}\") || {field_ref}.fieldPath.matches(\"{annotation_subscript}\"))))",
            list(FIELD_PATHS)
        ))
        .message(
            format!("{AT}: valueFrom.fieldRef.fieldPath must be one of {}, metadata.labels['KEY'] or metadata.annotations['KEY'] (apiVersion v1)", FIELD_PATHS.join(", ")).as_str(),
        ),
        Rule::new(format!(
            "self.all(e, !has(e.valueFrom) || !has({resource_ref}) || (({resource_ref}.resource in {} || {resource_ref}.resource.matches('^(limits|requests)[.]hugepages-[0-9]+([KMGTPE]i|[kMGTPE])?$')) && (!has({resource_ref}.containerName) || {resource_ref}.containerName in ['', '{CONTAINER}']) && (!has({resource_ref}.divisor) || string({resource_ref}.divisor) in ({resource_ref}.resource.endsWith('.cpu') ? ['0', '1', '1m'] : {}))))",
            list(RESOURCE_FIELDS),
            list(&[&["0"], BYTE_DIVISORS].concat()),
        ))
        .message(
            format!("{AT}: valueFrom.resourceFieldRef.resource must be one of {} or limits/requests.hugepages-SIZE, containerName empty or {CONTAINER}, and divisor 1 or 1m for CPU, a power of 1000 or 1024 such as 1Mi otherwise", RESOURCE_FIELDS.join(", ")).as_str(),
        ),
        key_ref_rule("configMapKeyRef", "ConfigMap"),
        key_ref_rule("secretKeyRef", "Secret"),
    ]
}

/// Rule: valueFrom.`field` names an object of kind `kind` and one of its keys.
fn key_ref_rule(field: &str, kind: &str) -> Rule {
    let r = format!("e.valueFrom.{field}");
    Rule::new(format!(
        "self.all(e, !has(e.valueFrom) || !has({r}) || ({r}.key.matches('^[-._a-zA-Z0-9]{{1,253}}$') && has({r}.name) && {r}.name.matches('{}')))",
        names::DNS_SUBDOMAIN
    ))
    .message(
        format!("{AT}: valueFrom.{field} needs name, the name of a {kind} in the fleet's namespace (a DNS subdomain), and key, at most 253 letters, digits, '-', '_' and '.'").as_str(),
    )
}

/// Rule: no environment variable the operator sets itself.
pub fn reserved_env_rule() -> Rule {
    let names = labels::RESERVED_ENV
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    Rule::new(format!("self.all(e, !(e.name in [{names}]))")).message(
        format!(
            "spec.env may not set {}: the operator sets them from objectStorage, storeRef and the fleet's pods",
            labels::RESERVED_ENV.join(", ")
        )
        .as_str(),
    )
}
