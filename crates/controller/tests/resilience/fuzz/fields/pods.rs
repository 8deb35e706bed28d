//! What the fleet's pods get: tolerations, topology spread, affinity, env, resources, image and
//! replicas.

use super::{Mutated, worst};
use crate::fuzz::values::{Class, Gen};
use serde_json::{Value, json};

pub fn tolerations(g: &mut Gen) -> Mutated {
    let one = |i: usize| json!({"key": format!("example.com/t{i}"), "operator": "Equal", "value": "celld", "effect": "NoSchedule"});
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!([one(0)]),
                json!([{"operator": "Exists"}]),
                json!([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}])
            ),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g;
                Value::Array((0..32).map(one).collect()),
                json!([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}]),
                json!([{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": i64::MAX}])
            ),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                Value::Array((0..33).map(one).collect()),
                json!([{"operator": "Exists", "value": "x"}]),
                json!([{"key": "k", "operator": "Equal", "value": "v", "effect": "Bogus"}]),
                json!([{"key": "bad key", "operator": "Exists"}]),
                json!([{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 10}]),
                json!([{"key": "k", "operator": "Lt", "value": "abc"}]),
                json!([{"key": "", "operator": "Equal", "value": "x"}]),
                json!([{"key": "k", "tolerationSeconds": "ten"}]),
                json!([null])
            ),
        ),
    }
}

pub fn topology_spread(g: &mut Gen, fleet: &str) -> Mutated {
    let one = |key: &str, skew: Value, when: &str| {
        json!({"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
               "labelSelector": {"matchLabels": {"platform.celld.dev/fleet": fleet}}})
    };
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!([one("kubernetes.io/hostname", json!(1), "ScheduleAnyway")]),
                json!([one("topology.kubernetes.io/zone", json!(2), "DoNotSchedule")])
            ),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g;
                json!([one("kubernetes.io/hostname", json!(i32::MAX), "ScheduleAnyway")]),
                Value::Array((0..8).map(|i| one(&format!("example.com/k{i}"), json!(1), "ScheduleAnyway")).collect()),
                json!([{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 1}])
            ),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!([one("kubernetes.io/hostname", json!(0), "ScheduleAnyway")]),
                json!([one("kubernetes.io/hostname", json!(-1), "ScheduleAnyway")]),
                json!([one("", json!(1), "ScheduleAnyway")]),
                json!([one("kubernetes.io/hostname", json!(1), "Sometimes")]),
                Value::Array((0..9).map(|i| one(&format!("example.com/k{i}"), json!(1), "ScheduleAnyway")).collect()),
                json!([{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}]),
                json!([{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}]),
                json!([{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 0}]),
                json!([{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule", "nodeAffinityPolicy": "Bogus"}]),
                json!([{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["platform.celld.dev/fleet"], "labelSelector": {"matchLabels": {"platform.celld.dev/fleet": fleet}}}])
            ),
        ),
    }
}

pub fn affinity(g: &mut Gen, fleet: &str) -> Mutated {
    let node = |op: &str, values: Value| {
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "type", "operator": op, "values": values}]}
        ]}}})
    };
    let anti = |weight: Value, key: &str| {
        json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": weight, "podAffinityTerm": {"topologyKey": key, "labelSelector": {"matchLabels": {"platform.celld.dev/fleet": fleet}}}}
        ]}})
    };
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g; node("In", json!(["kwok"])), anti(json!(100), "kubernetes.io/hostname")),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g;
                anti(json!(1), "kubernetes.io/hostname"),
                node("In", json!(["no-such-node-type"])),
                json!({})
            ),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                anti(json!(0), "kubernetes.io/hostname"),
                anti(json!(101), "kubernetes.io/hostname"),
                anti(json!(50), ""),
                node("Maybe", json!(["x"])),
                node("In", json!([])),
                node("Exists", json!(["x"])),
                node("Gt", json!(["not-a-number"])),
                json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}),
                json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"a": "b"}}}]}})
            ),
        ),
    }
}

pub fn env(g: &mut Gen) -> Mutated {
    let (name, nc) = g.env_name();
    match g.class() {
        Class::Valid => (
            nc,
            one_of!(g;
                json!([{"name": name, "value": "info"}]),
                json!([{"name": name, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]),
                json!([{"name": name, "valueFrom": {"secretKeyRef": {"name": "creds", "key": "AWS_SESSION_TOKEN"}}}]),
                json!([{"name": name, "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}}])
            ),
        ),
        Class::Boundary => (
            worst(nc, Class::Boundary),
            one_of!(g;
                Value::Array((0..64).map(|i| json!({"name": format!("X_{i}"), "value": "v"})).collect()),
                json!([{"name": name, "value": "v".repeat(100 * 1024)}]),
                json!([{"name": name, "value": ""}])
            ),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                Value::Array((0..65).map(|i| json!({"name": format!("X_{i}"), "value": "v"})).collect()),
                json!([{"name": name, "value": "1"}, {"name": name, "value": "2"}]),
                json!([{"name": name, "value": "v", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]),
                json!([{"name": name, "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}}]),
                json!([{"name": name, "valueFrom": {}}]),
                json!([{"name": name, "valueFrom": {"secretKeyRef": {"name": "creds"}}}]),
                json!([{"name": name, "valueFrom": {"configMapKeyRef": {"name": "Bad_Name", "key": "k"}}}]),
                json!([{"name": name, "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['x']"}, "secretKeyRef": {"name": "creds", "key": "k"}}}]),
                json!([{"value": "no name"}])
            ),
        ),
    }
}

pub fn resources(g: &mut Gen) -> Mutated {
    let (q1, c1) = g.quantity();
    let (q2, c2) = g.quantity();
    let class = worst(c1, c2);
    let value = match g.below(6) {
        0 => json!({"requests": {"cpu": q1, "memory": q2}}),
        1 => json!({"limits": {"cpu": q1, "memory": q2}}),
        2 => json!({"requests": {"cpu": q1}, "limits": {"memory": q2}}),
        3 => {
            return (
                Class::Hostile,
                json!({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
            );
        }
        4 => {
            return (
                Class::Hostile,
                one_of!(g;
                    json!({"requests": {"gpu": "1"}}),
                    json!({"requests": {"nvidia.com/gpu": "1"}}),
                    json!({"claims": [{"name": "x"}]}),
                    json!({"requests": "lots"})
                ),
            );
        }
        _ => json!({"requests": {"ephemeral-storage": q1}, "limits": {"ephemeral-storage": q2}}),
    };
    (class, value)
}

pub fn replicas(g: &mut Gen) -> Mutated {
    match g.class() {
        Class::Valid => (Class::Valid, json!(g.below(4))),
        Class::Boundary => (Class::Boundary, one_of!(g; json!(1000), json!(0))),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g; json!(1001), json!(-1), json!("3"), json!(2_147_483_648_i64), json!(1.5), Value::Null),
        ),
    }
}

pub fn autoscaling(g: &mut Gen) -> Mutated {
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!({"maxReplicas": 2}),
                json!({"minReplicas": 1, "maxReplicas": 3, "scaleUp": {"stabilizationWindowSeconds": 0, "maxNodesPerStep": 1, "periodSeconds": 10}}),
                json!({"minReplicas": 2, "maxReplicas": 2, "scaleDown": {"stabilizationWindowSeconds": 60, "periodSeconds": 60, "memoryUtilizationPercent": 50}})
            ),
        ),
        Class::Boundary => (
            Class::Boundary,
            json!({"minReplicas": 1, "maxReplicas": 1, "scaleUp": {"stabilizationWindowSeconds": 3600, "maxNodesPerStep": 100, "periodSeconds": 0}, "scaleDown": {"stabilizationWindowSeconds": 86400, "periodSeconds": 0, "memoryUtilizationPercent": 10}}),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!({"minReplicas": 3, "maxReplicas": 2}),
                json!({"maxReplicas": 0}),
                json!({"minReplicas": "2", "maxReplicas": 3}),
                json!({"minReplicas": 2}),
                json!({"maxReplicas": 3, "scaleDown": {"memoryUtilizationPercent": 101}}),
                json!({"maxReplicas": 3, "scaleUp": {"maxNodesPerStep": 0}})
            ),
        ),
    }
}

pub fn previews(g: &mut Gen) -> Mutated {
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!({"baseDomain": "preview.example.com", "bucket": "s3://celld-previews/fuzz", "ingressClass": "nginx"}),
                json!({"baseDomain": "p.example.com", "bucket": "celld-previews/fuzz", "gatewayRefs": [{"name": "public"}], "ttl": "90m", "maxTtl": "2h"}),
                json!({"baseDomain": "preview.example.com", "bucket": "s3://celld-previews/fuzz", "ingressClass": "nginx", "tls": {"clusterIssuer": "letsencrypt"}, "replicas": 2, "resources": {"limits": {"memory": "512Mi"}}})
            ),
        ),
        Class::Boundary => (
            Class::Boundary,
            json!({"baseDomain": format!("{}.example.com", "a".repeat(63)), "bucket": "s3://celld-previews/fuzz", "ingressClass": "nginx", "ttl": "1m", "maxTtl": "1m", "replicas": 10}),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!({"baseDomain": "preview.example.com", "bucket": "s3://celld-previews/fuzz"}),
                json!({"baseDomain": "preview.example.com", "bucket": "gs://celld-previews/fuzz", "ingressClass": "nginx"}),
                json!({"baseDomain": "*.preview.example.com", "bucket": "s3://celld-previews/fuzz", "ingressClass": "nginx"}),
                json!({"baseDomain": "preview.example.com", "bucket": "s3://celld-previews/fuzz", "ingressClass": "nginx", "ttl": "7d"}),
                json!({"baseDomain": "preview.example.com", "bucket": "s3://celld-previews/fuzz", "ingressClass": "nginx", "ttl": "3h", "maxTtl": "2h"}),
                json!({"baseDomain": "preview.example.com", "bucket": "s3://celld-previews/fuzz", "ingressClass": "nginx", "replicas": 0}),
                json!({"baseDomain": "preview.example.com", "bucket": "s3://celld-previews/fuzz", "gatewayRefs": [{"name": "public"}], "tls": {"secretName": "wild"}})
            ),
        ),
    }
}

pub fn image(g: &mut Gen) -> Mutated {
    let digest = "a".repeat(64);
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!({"image": celld_api::DEFAULT_IMAGE}),
                json!({"image": format!("registry.example.com:5000/celld@sha256:{digest}"), "imagePullPolicy": "IfNotPresent"}),
                json!({"imagePullPolicy": "Never"})
            ),
        ),
        Class::Boundary => (
            Class::Boundary,
            json!({"image": format!("registry.example.com/{}", "a".repeat(512 - 21))}),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!({"image": format!("registry.example.com/{}", "a".repeat(513 - 21))}),
                json!({"image": ""}),
                json!({"image": "UPPER/Case:tag"}),
                json!({"image": "has space:1"}),
                json!({"image": "image:tag:tag"}),
                json!({"image": "celld@sha256:short"}),
                json!({"imagePullPolicy": "Sometimes"})
            ),
        ),
    }
}
