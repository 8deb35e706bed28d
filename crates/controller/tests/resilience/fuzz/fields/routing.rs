//! Routing: the ingress a field needs, its TLS and its Gateways.

use super::{Mutated, set};
use crate::fuzz::values::{Class, Gen};
use serde_json::{Value, json};

/// Gives the fleet an ingress through an IngressClass unless it has one.
pub fn with_ingress(m: &mut Value, via_gateway: bool) {
    if m["spec"]["ingress"].is_object() {
        return;
    }
    let ingress = if via_gateway {
        json!({"hostname": "app.example.com", "gatewayRefs": [{"name": "gw"}]})
    } else {
        json!({"hostname": "app.example.com", "ingressClass": "nginx"})
    };
    set(m, "spec.ingress", ingress);
}

pub fn tls(g: &mut Gen) -> Mutated {
    let (name, c) = g.dns_name();
    match g.below(4) {
        0 => (c, json!({ "secretName": name })),
        1 => (c, json!({ "clusterIssuer": name })),
        2 => (
            Class::Hostile,
            json!({"secretName": name, "clusterIssuer": "letsencrypt"}),
        ),
        _ => (Class::Hostile, json!({})),
    }
}

pub fn gateway_refs(g: &mut Gen) -> Mutated {
    let refs = |n: usize, name: &str| -> Value {
        Value::Array(
            (0..n)
                .map(|i| json!({"name": format!("{name}{i}")}))
                .collect(),
        )
    };
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!([{"name": "gw"}]),
                json!([{"name": "gw", "namespace": "infra", "sectionName": "https"}])
            ),
        ),
        Class::Boundary => {
            let long = g.subdomain(250);
            (Class::Boundary, one_of!(g; refs(16, "gw"), refs(1, &long)))
        }
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                refs(17, "gw"),
                json!([{"name": ""}]),
                json!([{"name": "gw", "namespace": "Bad_NS"}]),
                json!([{"name": "gw", "sectionName": "bad section"}]),
                json!([{}]),
                json!([{"name": "gw", "namespace": "x".repeat(64)}])
            ),
        ),
    }
}
