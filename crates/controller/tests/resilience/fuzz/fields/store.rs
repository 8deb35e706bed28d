//! The store fields the generator mutates.

use super::meta::{map_entry, object_name};
use super::{Field, set};
use crate::fuzz::families::Family;
use crate::fuzz::values::Class;
use serde_json::{Value, json};

/// Every field of a store the generator mutates.
pub fn store_fields() -> Vec<Field> {
    vec![
        Field {
            family: Family::ObjectNames,
            path: "metadata.name",
            mutate: |m, g, ctx| {
                let (c, v) = object_name(g, ctx, 's');
                set(m, "metadata.name", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::LabelsAndSelectors,
            path: "metadata.labels",
            mutate: |m, g, _| map_entry(m, "metadata.labels", g, false),
        },
        Field {
            family: Family::Annotations,
            path: "metadata.annotations",
            mutate: |m, g, _| map_entry(m, "metadata.annotations", g, true),
        },
        Field {
            family: Family::Endpoint,
            path: "spec.endpoint",
            mutate: |m, g, ctx| {
                let (v, c) = g.endpoint(ctx.endpoint);
                set(m, "spec.endpoint", json!(v));
                let allow = v.starts_with("http://") && g.chance(0.8) || g.chance(0.2);
                set(m, "spec.allowHTTP", json!(allow));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Region,
            path: "spec.region",
            mutate: |m, g, _| {
                let (v, c) = g.region();
                set(m, "spec.region", json!(v));
                (c, json!(v))
            },
        },
        Field {
            family: Family::DnsNames,
            path: "spec.credentialsSecretRef.name",
            mutate: |m, g, _| {
                let (v, c) = g.dns_name();
                set(m, "spec.credentialsSecretRef.name", json!(v));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Credentials,
            path: "spec.credentialsSecretRef",
            mutate: |m, g, _| {
                let (c, v) = one_of!(g;
                    (Class::Valid, json!({"name": "creds-sentinel"})),
                    (Class::Hostile, json!({"name": "creds-partial"})),
                    (Class::Hostile, json!({})),
                    (Class::Hostile, Value::Null)
                );
                set(m, "spec.credentialsSecretRef", v.clone());
                (c, v)
            },
        },
    ]
}
