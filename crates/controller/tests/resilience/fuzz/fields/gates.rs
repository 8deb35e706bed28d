//! A rollout's gates: how long a wave may take, and its webhooks (names, URLs, timeouts,
//! retries, and the list: repeated names, the most it may hold and one more).

use super::{Field, Mutated};
use crate::fuzz::families::Family;
use crate::fuzz::values::{Class, Gen};
use serde_json::{Value, json};

/// The base rollout's first webhook (it has one), made again if a mutation took the list.
fn webhook(m: &mut Value) -> &mut Value {
    let hooks = &mut m["spec"]["gates"]["webhooks"];
    if hooks.as_array().is_none_or(Vec::is_empty) {
        *hooks = json!([{"name": "smoke", "url": "http://127.0.0.1:9/check"}]);
    }
    &mut hooks[0]
}

/// A webhook's name: a DNS label.
fn name(g: &mut Gen) -> Mutated {
    match g.class() {
        Class::Valid => (Class::Valid, json!(g.label(8))),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g; json!(g.label(63)), json!(g.word(1))),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!(g.label(64)),
                json!("Smoke"),
                json!("smoke_tests"),
                json!("-smoke"),
                json!("smoke-"),
                json!("smoke.tests"),
                json!(""),
                json!("smöke"),
                Value::Null,
            ),
        ),
    }
}

/// The whole list of webhooks, each calling `gate`.
fn webhooks(g: &mut Gen, gate: &str) -> Mutated {
    let named = |n: usize| -> Value {
        Value::Array(
            (0..n)
                .map(|i| json!({"name": format!("gate-{i}"), "url": gate}))
                .collect(),
        )
    };
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!([]),
                json!([{"name": "smoke", "url": gate}, {"name": "slo", "url": gate, "timeout": "2s", "retries": 1}]),
            ),
        ),
        Class::Boundary => (Class::Boundary, named(8)),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                named(9),
                json!([{"name": "smoke", "url": gate}, {"name": "smoke", "url": "http://127.0.0.1:9/other"}]),
                json!([{"name": "smoke"}]),
                json!([{"url": gate}]),
                json!([{}]),
                json!([null]),
                json!(gate),
            ),
        ),
    }
}

/// Every field of a rollout's gates the generator mutates.
pub fn gate_fields() -> Vec<Field> {
    vec![
        Field {
            family: Family::Durations,
            path: "spec.gates.progressDeadline",
            mutate: |m, g, _| {
                let (v, c) = g.duration("1m", "24h");
                m["spec"]["gates"]["progressDeadline"] = v.clone();
                (c, v)
            },
        },
        Field {
            family: Family::DnsNames,
            path: "spec.gates.webhooks[*].name",
            mutate: |m, g, _| {
                let (c, v) = name(g);
                webhook(m)["name"] = v.clone();
                (c, v)
            },
        },
        Field {
            family: Family::Webhooks,
            path: "spec.gates.webhooks[*].url",
            mutate: |m, g, _| {
                let hook = webhook(m);
                let gate = hook["url"].as_str().unwrap_or_default().to_string();
                let (v, c) = g.webhook_url(&gate);
                hook["url"] = json!(v);
                (c, json!(v))
            },
        },
        Field {
            family: Family::Durations,
            path: "spec.gates.webhooks[*].timeout",
            mutate: |m, g, _| {
                let (v, c) = g.duration("1s", "5m");
                webhook(m)["timeout"] = v.clone();
                (c, v)
            },
        },
        Field {
            family: Family::Counts,
            path: "spec.gates.webhooks[*].retries",
            mutate: |m, g, _| {
                let (v, c) = g.count(0, 10);
                webhook(m)["retries"] = v.clone();
                (c, v)
            },
        },
        Field {
            family: Family::Webhooks,
            path: "spec.gates.webhooks",
            mutate: |m, g, _| {
                let gate = webhook(m)["url"].as_str().unwrap_or_default().to_string();
                let (c, v) = webhooks(g, &gate);
                m["spec"]["gates"]["webhooks"] = v.clone();
                (c, v)
            },
        },
    ]
}
