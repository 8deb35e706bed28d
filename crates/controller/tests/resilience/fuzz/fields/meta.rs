//! Metadata: object names, label and annotation maps, and DNS names of referenced objects.

use super::routing::with_ingress;
use super::{Ctx, Mutated, remove, set, worst};
use crate::fuzz::values::{Class, Gen};
use serde_json::{Value, json};

/// Sets the map at `path` to one generated entry (an annotation value, or a label value).
pub fn map_entry(m: &mut Value, path: &str, g: &mut Gen, annotation: bool) -> Mutated {
    let (key, kc) = g.key();
    let (value, vc) = if annotation {
        g.annotation_value()
    } else {
        g.label_value()
    };
    let entry = json!({ key: value });
    set(m, path, entry.clone());
    (worst(kc, vc), entry)
}

/// A mutator of the DNS name at `path` (a ServiceAccount, pull Secret, IngressClass,
/// StorageClass or, for any other path, the store the fleet uses).
pub fn name_at(path: &'static str) -> fn(&mut Value, &mut Gen, &Ctx) -> Mutated {
    match path {
        "spec.serviceAccountName" => |m, g, _| {
            let (v, c) = g.dns_name();
            set(m, "spec.serviceAccountName", json!(v));
            (c, json!(v))
        },
        "spec.imagePullSecrets" => |m, g, _| {
            let (v, c) = g.dns_name();
            set(m, "spec.imagePullSecrets", json!([{ "name": v }]));
            (c, json!(v))
        },
        "spec.ingress.ingressClass" => |m, g, _| {
            with_ingress(m, false);
            let (v, c) = g.dns_name();
            set(m, "spec.ingress.ingressClass", json!(v));
            (c, json!(v))
        },
        "spec.localStorage.storageClassName" => |m, g, _| {
            let (v, c) = g.dns_name();
            set(
                m,
                "spec.localStorage",
                json!({"type": "Persistent", "size": "1Gi", "storageClassName": v}),
            );
            (c, json!(v))
        },
        _ => |m, g, _| {
            let (v, c) = g.dns_name();
            remove(m, "spec.objectStorage", "credentialsSecretRef");
            remove(m, "spec.objectStorage", "endpoint");
            remove(m, "spec.objectStorage", "region");
            remove(m, "spec.objectStorage", "allowHTTP");
            set(m, "spec.storeRef", json!({ "name": v }));
            (c, json!(v))
        },
    }
}

/// A metadata.name for case `ctx.index`, `letter` telling fleets from stores.
pub fn object_name(g: &mut Gen, ctx: &Ctx, letter: char) -> Mutated {
    let id = format!("{letter}{:05}", ctx.index);
    match g.class() {
        Class::Valid => (Class::Valid, json!(format!("{id}-{}", g.word(4)))),
        Class::Boundary => (
            Class::Boundary,
            json!(format!("{id}-{}", "n".repeat(52 - id.len() - 1))),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!(format!("{id}-{}", "n".repeat(53 - id.len() - 1))),
                json!(id.to_uppercase()),
                json!(format!("{}{id}", ctx.index % 10)),
                json!(format!("{id}.x")),
                json!(format!("{id}-")),
                json!(format!("{id}_x")),
                json!(format!("{id}-{}", "n".repeat(250)))
            ),
        ),
    }
}
