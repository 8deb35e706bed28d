//! One mutator per field: each writes a generated value (valid, boundary or hostile) into a
//! manifest, adding what the field needs around it (an ingress for its hostname, an inline
//! connection for an endpoint...).

use super::families::Family;
use super::values::{Class, Gen};
use serde_json::{Map, Value, json};

/// What a mutator knows about the case it mutates.
pub struct Ctx<'a> {
    pub index: usize,
    pub fleet: &'a str,
    pub endpoint: &'a str,
    pub region: &'a str,
    pub bucket: &'a str,
    pub prefix: &'a str,
}

/// A mutator's result: the class of the value it wrote and the value, for messages.
pub type Mutated = (Class, Value);

/// One field the generator mutates.
pub struct Field {
    pub family: Family,
    pub path: &'static str,
    pub mutate: fn(&mut Value, &mut Gen, &Ctx) -> Mutated,
}

/// Sets `path` (dot-separated object keys) to `value`, creating objects on the way.
pub fn set(manifest: &mut Value, path: &str, value: Value) {
    let mut at = manifest;
    let mut keys = path.split('.').peekable();
    while let Some(key) = keys.next() {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let object = at.as_object_mut().expect("an object");
        if keys.peek().is_none() {
            object.insert(key.to_string(), value);
            return;
        }
        at = object
            .entry(key)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

fn remove(manifest: &mut Value, parent: &str, key: &str) {
    let mut at = manifest;
    for k in parent.split('.') {
        match at.get_mut(k) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(object) = at.as_object_mut() {
        object.remove(key);
    }
}

fn worst(a: Class, b: Class) -> Class {
    a.max(b)
}

/// Gives the fleet an ingress through an IngressClass unless it has one.
fn with_ingress(m: &mut Value, via_gateway: bool) {
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

/// Turns a fleet that uses a store into one with an inline connection to the test S3 server.
fn inline(m: &mut Value, ctx: &Ctx) {
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

fn map_entry(m: &mut Value, path: &str, g: &mut Gen, annotation: bool) -> Mutated {
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

fn name_at(path: &'static str) -> fn(&mut Value, &mut Gen, &Ctx) -> Mutated {
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

fn tolerations(g: &mut Gen) -> Mutated {
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

fn topology_spread(g: &mut Gen, fleet: &str) -> Mutated {
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

fn affinity(g: &mut Gen, fleet: &str) -> Mutated {
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

fn env(g: &mut Gen) -> Mutated {
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

fn resources(g: &mut Gen) -> Mutated {
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

fn tls(g: &mut Gen) -> Mutated {
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

fn gateway_refs(g: &mut Gen) -> Mutated {
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

fn local_storage(g: &mut Gen) -> Mutated {
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

fn replicas(g: &mut Gen) -> Mutated {
    match g.class() {
        Class::Valid => (Class::Valid, json!(g.below(4))),
        Class::Boundary => (Class::Boundary, one_of!(g; json!(1000), json!(0))),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g; json!(1001), json!(-1), json!("3"), json!(2_147_483_648_i64), json!(1.5), Value::Null),
        ),
    }
}

fn image(g: &mut Gen) -> Mutated {
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

fn object_name(g: &mut Gen, ctx: &Ctx, letter: char) -> Mutated {
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

/// Every field of a fleet the generator mutates.
pub fn fleet_fields() -> Vec<Field> {
    vec![
        Field {
            family: Family::ObjectNames,
            path: "metadata.name",
            mutate: |m, g, ctx| {
                let (c, v) = object_name(g, ctx, 'c');
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
            family: Family::LabelsAndSelectors,
            path: "spec.podLabels",
            mutate: |m, g, _| map_entry(m, "spec.podLabels", g, false),
        },
        Field {
            family: Family::LabelsAndSelectors,
            path: "spec.nodeSelector",
            mutate: |m, g, _| map_entry(m, "spec.nodeSelector", g, false),
        },
        Field {
            family: Family::Annotations,
            path: "metadata.annotations",
            mutate: |m, g, _| map_entry(m, "metadata.annotations", g, true),
        },
        Field {
            family: Family::Annotations,
            path: "spec.podAnnotations",
            mutate: |m, g, _| map_entry(m, "spec.podAnnotations", g, true),
        },
        Field {
            family: Family::Annotations,
            path: "spec.service.annotations",
            mutate: |m, g, _| map_entry(m, "spec.service.annotations", g, true),
        },
        Field {
            family: Family::Annotations,
            path: "spec.ingress.annotations",
            mutate: |m, g, _| {
                let via_gateway = g.chance(0.5);
                with_ingress(m, via_gateway);
                map_entry(m, "spec.ingress.annotations", g, true)
            },
        },
        Field {
            family: Family::DnsNames,
            path: "spec.serviceAccountName",
            mutate: name_at("spec.serviceAccountName"),
        },
        Field {
            family: Family::DnsNames,
            path: "spec.imagePullSecrets",
            mutate: name_at("spec.imagePullSecrets"),
        },
        Field {
            family: Family::DnsNames,
            path: "spec.ingress.ingressClass",
            mutate: name_at("spec.ingress.ingressClass"),
        },
        Field {
            family: Family::DnsNames,
            path: "spec.localStorage.storageClassName",
            mutate: name_at("spec.localStorage.storageClassName"),
        },
        Field {
            family: Family::DnsNames,
            path: "spec.storeRef.name",
            mutate: name_at("spec.storeRef.name"),
        },
        Field {
            family: Family::Hostnames,
            path: "spec.ingress.hostname",
            mutate: |m, g, _| {
                let via_gateway = g.chance(0.5);
                with_ingress(m, via_gateway);
                let (v, c) = g.hostname();
                set(m, "spec.ingress.hostname", json!(v));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Paths,
            path: "spec.ingress.path",
            mutate: |m, g, _| {
                let via_gateway = g.chance(0.5);
                with_ingress(m, via_gateway);
                let (v, c) = g.path();
                set(m, "spec.ingress.path", json!(v));
                if g.chance(0.4) {
                    set(m, "spec.ingress.stripPrefix", json!(true));
                }
                (c, json!(v))
            },
        },
        Field {
            family: Family::Tolerations,
            path: "spec.tolerations",
            mutate: |m, g, _| {
                let (c, v) = tolerations(g);
                set(m, "spec.tolerations", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::TopologySpread,
            path: "spec.topologySpreadConstraints",
            mutate: |m, g, ctx| {
                let (c, v) = topology_spread(g, ctx.fleet);
                set(m, "spec.topologySpreadConstraints", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Affinity,
            path: "spec.affinity",
            mutate: |m, g, ctx| {
                let (c, v) = affinity(g, ctx.fleet);
                set(m, "spec.affinity", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Env,
            path: "spec.env",
            mutate: |m, g, _| {
                let (c, v) = env(g);
                set(m, "spec.env", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Resources,
            path: "spec.resources",
            mutate: |m, g, _| {
                let (c, v) = resources(g);
                set(m, "spec.resources", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Tls,
            path: "spec.ingress.tls",
            mutate: |m, g, _| {
                with_ingress(m, false);
                let (c, v) = tls(g);
                set(m, "spec.ingress.tls", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::GatewayRefs,
            path: "spec.ingress.gatewayRefs",
            mutate: |m, g, _| {
                with_ingress(m, true);
                let (c, v) = gateway_refs(g);
                set(m, "spec.ingress.gatewayRefs", v.clone());
                if g.chance(0.15) {
                    set(m, "spec.ingress.ingressClass", json!("nginx"));
                    return (Class::Hostile, v);
                }
                remove(m, "spec.ingress", "ingressClass");
                (c, v)
            },
        },
        Field {
            family: Family::LocalStorage,
            path: "spec.localStorage",
            mutate: |m, g, _| {
                let (c, v) = local_storage(g);
                set(m, "spec.localStorage", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Bucket,
            path: "spec.objectStorage.bucket",
            mutate: |m, g, ctx| {
                let (v, c) = g.bucket(ctx.bucket, ctx.prefix);
                set(m, "spec.objectStorage.bucket", json!(v));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Endpoint,
            path: "spec.objectStorage.endpoint",
            mutate: |m, g, ctx| {
                inline(m, ctx);
                let (v, c) = g.endpoint(ctx.endpoint);
                set(m, "spec.objectStorage.endpoint", json!(v));
                let allow = v.starts_with("http://") && g.chance(0.8) || g.chance(0.2);
                set(m, "spec.objectStorage.allowHTTP", json!(allow));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Region,
            path: "spec.objectStorage.region",
            mutate: |m, g, ctx| {
                inline(m, ctx);
                let (v, c) = g.region();
                set(m, "spec.objectStorage.region", json!(v));
                (c, json!(v))
            },
        },
        Field {
            family: Family::Credentials,
            path: "spec.objectStorage.credentialsSecretRef",
            mutate: |m, g, ctx| {
                inline(m, ctx);
                let (class, value) = match g.below(6) {
                    0 => (Class::Valid, json!({"name": "creds-sentinel"})),
                    1 => (Class::Boundary, json!({"name": "no-such-secret"})),
                    2 => (Class::Hostile, json!({"name": "creds-partial"})),
                    3 => (Class::Hostile, json!({"name": ""})),
                    4 => {
                        set(m, "spec.storeRef", json!({"name": "store"}));
                        (Class::Hostile, json!({"name": "creds"}))
                    }
                    _ => {
                        remove(m, "spec.objectStorage", "credentialsSecretRef");
                        return (Class::Hostile, Value::Null);
                    }
                };
                set(m, "spec.objectStorage.credentialsSecretRef", value.clone());
                (class, value)
            },
        },
        Field {
            family: Family::Replicas,
            path: "spec.replicas",
            mutate: |m, g, _| {
                let (c, v) = replicas(g);
                set(m, "spec.replicas", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Image,
            path: "spec.image",
            mutate: |m, g, _| {
                let (c, v) = image(g);
                if let (Some(spec), Some(fields)) = (m["spec"].as_object_mut(), v.as_object()) {
                    for (k, x) in fields {
                        spec.insert(k.clone(), x.clone());
                    }
                }
                (c, v)
            },
        },
        Field {
            family: Family::Enums,
            path: "spec.service.type / durability / ingress.pathType",
            mutate: |m, g, _| match g.below(3) {
                0 => {
                    let (c, v) = one_of!(g;
                        (Class::Valid, json!("NodePort")),
                        (Class::Valid, json!("LoadBalancer")),
                        (Class::Hostile, json!("ExternalName")),
                        (Class::Hostile, json!("Bogus")),
                        (Class::Hostile, json!(""))
                    );
                    set(m, "spec.service.type", v.clone());
                    (c, v)
                }
                1 => {
                    let (c, v) = one_of!(g;
                        (Class::Valid, json!("fleet")),
                        (Class::Valid, json!("bucket")),
                        (Class::Hostile, json!("Fleet")),
                        (Class::Hostile, json!("none"))
                    );
                    set(m, "spec.durability", v.clone());
                    (c, v)
                }
                _ => {
                    let via_gateway = g.chance(0.5);
                    with_ingress(m, via_gateway);
                    let (c, v) = one_of!(g;
                        (Class::Valid, json!("Exact")),
                        (Class::Valid, json!("Prefix")),
                        (Class::Boundary, json!("ImplementationSpecific")),
                        (Class::Hostile, json!("Regex"))
                    );
                    set(m, "spec.ingress.pathType", v.clone());
                    (c, v)
                }
            },
        },
    ]
}

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
