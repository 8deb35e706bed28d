//! The fleet fields the generator mutates.

use super::meta::{map_entry, name_at, object_name};
use super::pods::{
    affinity, autoscaling, env, image, previews, replicas, resources, tolerations, topology_spread,
};
use super::routing::{gateway_refs, tls, with_ingress};
use super::storage::{inline, local_storage};
use super::{Field, remove, set};
use crate::fuzz::families::Family;
use crate::fuzz::values::Class;
use serde_json::{Value, json};

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
            family: Family::Autoscaling,
            path: "spec.autoscaling",
            mutate: |m, g, _| {
                let (c, v) = autoscaling(g);
                set(m, "spec.autoscaling", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Previews,
            path: "spec.previews",
            mutate: |m, g, _| {
                let (c, v) = previews(g);
                set(m, "spec.previews", v.clone());
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
            path: "spec.service.type / durability / upgradeStrategy / ingress.pathType",
            mutate: |m, g, _| match g.below(4) {
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
                2 => {
                    let (c, v) = one_of!(g;
                        (Class::Valid, json!("Auto")),
                        (Class::Valid, json!("Rolling")),
                        (Class::Valid, json!("FullStop")),
                        (Class::Hostile, json!("rolling")),
                        (Class::Hostile, json!("Never"))
                    );
                    set(m, "spec.upgradeStrategy", v.clone());
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
