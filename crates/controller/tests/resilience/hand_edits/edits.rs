//! The hand edits: one field the operator owns, per child kind.

use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

/// One hand edit of one child: its `field` set to `value`.
pub struct Edit {
    pub kind: &'static str,
    pub resource: ApiResource,
    pub name: &'static str,
    /// JSON pointer of the field the edit changes (under `/spec`).
    pub field: &'static str,
    pub value: Value,
    /// What the edit does, for the report.
    pub what: &'static str,
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

pub fn edits(gateway_api: bool) -> Vec<Edit> {
    let sts = resource("apps", "v1", "StatefulSet", "statefulsets");
    let svc = resource("", "v1", "Service", "services");
    let edit = |kind, resource: &ApiResource, name, field, value, what| Edit {
        kind,
        resource: resource.clone(),
        name,
        field,
        value,
        what,
    };
    let mut edits = vec![
        edit(
            "StatefulSet",
            &sts,
            "web",
            "/spec/replicas",
            json!(5),
            "replicas 2 → 5",
        ),
        edit(
            "StatefulSet",
            &sts,
            "web",
            "/spec/template/spec/containers/0/image",
            json!("registry.example.com/hand-edited:1"),
            "container image replaced",
        ),
        edit(
            "Service",
            &svc,
            "web",
            "/spec/ports/0/port",
            json!(8088),
            "port 80 → 8088",
        ),
        edit(
            "Service",
            &svc,
            "web",
            "/spec/ports/0/targetPort",
            json!(9999),
            "targetPort 8080 → 9999",
        ),
        edit(
            "Service",
            &svc,
            "web-peer",
            "/spec/ports/0/port",
            json!(9091),
            "peer port 8081 → 9091",
        ),
        edit(
            "NetworkPolicy",
            &resource(
                "networking.k8s.io",
                "v1",
                "NetworkPolicy",
                "networkpolicies",
            ),
            "web",
            "/spec/ingress",
            json!([{}]),
            "ingress opened to every source",
        ),
        edit(
            "PodDisruptionBudget",
            &resource(
                "policy",
                "v1",
                "PodDisruptionBudget",
                "poddisruptionbudgets",
            ),
            "web",
            "/spec/maxUnavailable",
            json!(3),
            "maxUnavailable 1 → 3",
        ),
        edit(
            "Ingress",
            &resource("networking.k8s.io", "v1", "Ingress", "ingresses"),
            "web",
            "/spec/rules/0/host",
            json!("hijacked.example.com"),
            "host → hijacked.example.com",
        ),
    ];
    if gateway_api {
        edits.push(edit(
            "HTTPRoute",
            &resource("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes"),
            "routed",
            "/spec/hostnames",
            json!(["hijacked.example.com"]),
            "hostnames → hijacked.example.com",
        ));
    }
    edits
}
