//! Storage: the inline connection a field needs, and local work storage.

use super::{Ctx, Mutated, remove, set};
use crate::fuzz::values::{Class, Gen};
use serde_json::{Value, json};

/// Turns a fleet that uses a store into one with an inline connection to the test S3 server.
pub fn inline(m: &mut Value, ctx: &Ctx) {
    remove(m, "spec", "storeRef");
    for (k, v) in [
        ("endpoint", json!(ctx.endpoint)),
        ("allowHTTP", json!(true)),
        ("region", json!(ctx.region)),
    ] {
        if m["spec"]["objectStorage"].get(k).is_none() {
            set(m, &format!("spec.objectStorage.{k}"), v);
        }
    }
    if m["spec"]["objectStorage"]
        .get("credentialsSecretRef")
        .is_none()
    {
        set(
            m,
            "spec.objectStorage.credentialsSecretRef",
            json!({"name": "creds"}),
        );
    }
}

pub fn local_storage(g: &mut Gen) -> Mutated {
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!({"type": "Persistent", "size": "1Gi", "storageClassName": "kwok-volume"}),
                json!({"type": "Ephemeral", "size": "500Mi"}),
                json!({"type": "Persistent", "size": "2Gi", "whenDeleted": "Delete"})
            ),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g;
                json!({"type": "Ephemeral", "size": "1Ei"}),
                json!({"type": "Ephemeral", "size": "1"}),
                json!({"type": "Persistent", "size": "1Gi", "storageClassName": "s".repeat(253)})
            ),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!({"type": "Ephemeral", "size": "0"}),
                json!({"type": "Ephemeral", "size": "-1Gi"}),
                json!({"type": "Ephemeral", "size": "abc"}),
                json!({"type": "Ephemeral", "size": "1Gi "}),
                json!({"type": "Ephemeral", "size": "1Gi", "storageClassName": "x"}),
                json!({"type": "Persistent", "size": "1Gi", "whenDeleted": "Sometimes"}),
                json!({"type": "Tmpfs", "size": "1Gi"}),
                json!({"type": "Ephemeral", "size": 5}),
                json!({"type": "Persistent", "size": "1Gi", "storageClassName": "Bad_Class"})
            ),
        ),
    }
}
