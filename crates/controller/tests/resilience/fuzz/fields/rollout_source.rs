//! What a rollout ships: `spec.source` (an image or a Flux sourceRef, a directory in it, the
//! publish's retries and timeout, the deployer image).

use super::{Field, Mutated, remove, set, worst};
use crate::fuzz::families::Family;
use crate::fuzz::values::{Class, Gen};
use serde_json::{Value, json};

/// A Flux sourceRef in place of the image: a kind (valid or not) and a DNS name.
fn source_ref(m: &mut Value, g: &mut Gen) -> Mutated {
    let (kind, kc) = one_of!(g;
        ("OCIRepository", Class::Valid),
        ("GitRepository", Class::Valid),
        ("Bucket", Class::Valid),
        ("HelmRepository", Class::Hostile),
        ("ocirepository", Class::Hostile),
        ("", Class::Hostile),
    );
    let (name, nc) = g.dns_name();
    let value = json!({"kind": kind, "name": name});
    set(m, "spec.source.sourceRef", value.clone());
    if g.chance(0.15) {
        return (Class::Hostile, json!({"image and sourceRef": value}));
    }
    remove(m, "spec.source", "image");
    (worst(kc, nc), value)
}

/// The whole of `spec.source` shaped wrong: neither image nor sourceRef, an image without a
/// reference, a string, null.
fn source_shape(m: &mut Value, g: &mut Gen) -> Mutated {
    let (class, value) = one_of!(g;
        (Class::Hostile, json!({})),
        (Class::Hostile, json!({"image": {}})),
        (Class::Hostile, json!({"image": {"reference": "registry.invalid/web:1"}, "sourceRef": {}})),
        (Class::Hostile, json!("registry.invalid/web:1")),
        (Class::Hostile, Value::Null),
        (Class::Boundary, json!({"image": {"reference": "registry.invalid/web:1", "layout": "Deployer"}, "path": "./", "retries": 1, "timeout": "30s"})),
    );
    set(m, "spec.source", value.clone());
    (class, value)
}

fn deployer_image(m: &mut Value, g: &mut Gen) -> Mutated {
    let (class, value) = match g.class() {
        Class::Valid => (
            Class::Valid,
            json!(format!(
                "ghcr.io/celld/deployer:1.0@sha256:{}",
                "c".repeat(64)
            )),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g; json!(format!("ghcr.io/{}", "d".repeat(512 - 8))), json!("d")),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!(""),
                json!("ghcr.io/celld/deployer:has space"),
                json!(format!("ghcr.io/{}", "d".repeat(513 - 8))),
                json!("\tghcr.io/celld/deployer"),
                json!("ghcr.io/celld/deployer\n:1"),
                json!(7),
            ),
        ),
    };
    set(m, "spec.source.deployerImage", value.clone());
    (class, value)
}

/// Every field of a rollout's source the generator mutates.
pub fn source_fields() -> Vec<Field> {
    vec![
        Field {
            family: Family::Sources,
            path: "spec.source.image.reference",
            mutate: |m, g, _| {
                let (v, c) = g.image_reference();
                set(m, "spec.source.image.reference", json!(v));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Sources,
            path: "spec.source.image.layout",
            mutate: |m, g, _| {
                let (c, v) = one_of!(g;
                    (Class::Valid, json!("Volume")),
                    (Class::Valid, json!("Deployer")),
                    (Class::Hostile, json!("volume")),
                    (Class::Hostile, json!("Bogus")),
                    (Class::Hostile, json!("")),
                );
                set(m, "spec.source.image.layout", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Sources,
            path: "spec.source.sourceRef",
            mutate: |m, g, _| source_ref(m, g),
        },
        Field {
            family: Family::Sources,
            path: "spec.source (neither image nor sourceRef, both, not an object)",
            mutate: |m, g, _| source_shape(m, g),
        },
        Field {
            family: Family::Sources,
            path: "spec.source.deployerImage",
            mutate: |m, g, _| deployer_image(m, g),
        },
        Field {
            family: Family::Paths,
            path: "spec.source.path",
            mutate: |m, g, _| {
                let (v, c) = g.source_path();
                set(m, "spec.source.path", json!(v));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Counts,
            path: "spec.source.retries",
            mutate: |m, g, _| {
                let (v, c) = g.count(1, 100);
                set(m, "spec.source.retries", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Durations,
            path: "spec.source.timeout",
            mutate: |m, g, _| {
                let (v, c) = g.duration("30s", "24h");
                set(m, "spec.source.timeout", v.clone());
                (c, v)
            },
        },
    ]
}
