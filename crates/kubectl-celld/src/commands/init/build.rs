//! Building a CelldFleet from the `init` flags, checking it with the admission rules, and the
//! document that is printed or applied: only what the flags set, without the API's defaults.

use super::args::{
    DurabilityArg, InitArgs, LocalStorageArg, PathTypeArg, PullPolicy, RetentionArg,
    ServiceTypeArg, SpreadArg,
};
use super::hints;
use crate::error::{Error, Result};
use crate::text::parse::{KeyValue, TolerationArg};
use celld_api::fleet::ImagePullPolicy;
use celld_api::{
    CelldFleet, CelldFleetSpec, Durability, GatewayRef, IngressSpec, IngressTls, LocalStorage,
    LocalStorageType, PathType, PvcRetention, SecretRef, ServiceType, StoreRef, labels,
};
use k8s_openapi::api::core::v1::{
    Affinity, EnvVar, LocalObjectReference, ResourceRequirements, Toleration,
    TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;
use std::collections::BTreeMap;

/// A fleet built from flags.
#[derive(Debug, Clone)]
pub struct Built {
    /// The typed object, API defaults included (what admission sees).
    pub fleet: CelldFleet,
    /// The document to print or apply: only the fields the flags set.
    pub document: Value,
}

fn map(pairs: &[KeyValue]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone()))
        .collect()
}

fn toleration(t: &TolerationArg) -> Toleration {
    Toleration {
        key: t.key.clone(),
        operator: Some(if t.value.is_some() { "Equal" } else { "Exists" }.to_string()),
        value: t.value.clone(),
        effect: t.effect.clone(),
        ..Toleration::default()
    }
}

fn spread(name: &str, s: SpreadArg) -> TopologySpreadConstraint {
    TopologySpreadConstraint {
        max_skew: 1,
        topology_key: match s {
            SpreadArg::Zone => "topology.kubernetes.io/zone",
            SpreadArg::Node => "kubernetes.io/hostname",
        }
        .to_string(),
        when_unsatisfiable: "ScheduleAnyway".to_string(),
        label_selector: Some(LabelSelector {
            match_labels: Some(BTreeMap::from([(
                labels::FLEET.to_string(),
                name.to_string(),
            )])),
            ..LabelSelector::default()
        }),
        ..TopologySpreadConstraint::default()
    }
}

fn resources(a: &InitArgs) -> Option<ResourceRequirements> {
    let pick = |cpu: &Option<String>, mem: &Option<String>| {
        let mut m = BTreeMap::new();
        if let Some(c) = cpu {
            m.insert("cpu".to_string(), Quantity(c.clone()));
        }
        if let Some(v) = mem {
            m.insert("memory".to_string(), Quantity(v.clone()));
        }
        (!m.is_empty()).then_some(m)
    };
    let requests = pick(&a.cpu_request, &a.memory_request);
    let limits = pick(&a.cpu_limit, &a.memory_limit);
    (requests.is_some() || limits.is_some()).then(|| ResourceRequirements {
        requests,
        limits,
        ..ResourceRequirements::default()
    })
}

fn affinity(a: &InitArgs) -> Result<Option<Affinity>> {
    let Some(path) = &a.affinity_file else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        what: "cannot read --affinity-file",
        path: path.clone(),
        source,
    })?;
    serde_yaml::from_str(&text).map(Some).map_err(|e| {
        Error::InvalidSpec(format!(
            "--affinity-file '{}' is not a Kubernetes Affinity in YAML or JSON ({e}); it should hold nodeAffinity, podAffinity and/or podAntiAffinity",
            path.display()
        ))
    })
}

fn ingress(a: &InitArgs) -> Option<IngressSpec> {
    let hostname = a.hostname.clone()?;
    let tls = (a.tls_cluster_issuer.is_some() || a.tls_secret.is_some()).then(|| IngressTls {
        cluster_issuer: a.tls_cluster_issuer.clone(),
        secret_name: a.tls_secret.clone(),
    });
    Some(IngressSpec {
        hostname,
        path: a.path.clone().unwrap_or_else(|| "/".to_string()),
        path_type: match a.path_type {
            None | Some(PathTypeArg::Prefix) => PathType::Prefix,
            Some(PathTypeArg::Exact) => PathType::Exact,
            Some(PathTypeArg::ImplementationSpecific) => PathType::ImplementationSpecific,
        },
        strip_prefix: a.strip_prefix,
        ingress_class: a.ingress_class.clone(),
        gateway_refs: a
            .gateways
            .iter()
            .map(|g| GatewayRef {
                name: g.name.clone(),
                namespace: g.namespace.clone(),
                section_name: g.section.clone(),
            })
            .collect(),
        tls,
        annotations: map(&a.route_annotations),
    })
}

fn local_storage(a: &InitArgs) -> LocalStorage {
    let mut ls = LocalStorage::default();
    if let Some(t) = a.local_storage {
        ls.type_ = match t {
            LocalStorageArg::Ephemeral => LocalStorageType::Ephemeral,
            LocalStorageArg::Persistent => LocalStorageType::Persistent,
        };
    }
    if let Some(size) = &a.local_storage_size {
        ls.size = size.clone();
    }
    ls.storage_class_name = a.storage_class.clone();
    if let Some(r) = a.pvc_retention {
        ls.when_deleted = match r {
            RetentionArg::Retain => PvcRetention::Retain,
            RetentionArg::Delete => PvcRetention::Delete,
        };
    }
    ls
}

/// The spec the flags describe, with the API's defaults for everything they leave out.
pub fn spec(a: &InitArgs) -> Result<CelldFleetSpec> {
    let mut s = CelldFleetSpec::with_bucket(a.bucket.clone());
    s.store_ref = a.store.clone().map(|name| StoreRef { name });
    s.object_storage.endpoint = a.endpoint.clone();
    s.object_storage.region = a.region.clone();
    s.object_storage.allow_http = a.allow_http.then_some(true);
    s.object_storage.azure_storage_account = a.azure_storage_account.clone();
    s.object_storage.credentials_secret_ref =
        a.credentials_secret.clone().map(|name| SecretRef { name });
    if let Some(r) = a.replicas {
        s.replicas = r;
    }
    if let Some(i) = &a.image {
        s.image = i.clone();
    }
    s.image_pull_policy = a.image_pull_policy.map(|p| match p {
        PullPolicy::Always => ImagePullPolicy::Always,
        PullPolicy::IfNotPresent => ImagePullPolicy::IfNotPresent,
        PullPolicy::Never => ImagePullPolicy::Never,
    });
    s.image_pull_secrets = a
        .image_pull_secrets
        .iter()
        .map(|name| LocalObjectReference { name: name.clone() })
        .collect();
    s.durability = a.durability.map(|d| match d {
        DurabilityArg::Fleet => Durability::Fleet,
        DurabilityArg::Bucket => Durability::Bucket,
    });
    s.env = a
        .env
        .iter()
        .map(|kv| EnvVar {
            name: kv.key.clone(),
            value: Some(kv.value.clone()),
            ..EnvVar::default()
        })
        .collect();
    s.resources = resources(a).map(Box::new);
    s.service_account_name = a.service_account.clone();
    s.pod_labels = map(&a.pod_labels);
    s.pod_annotations = map(&a.pod_annotations);
    s.node_selector = map(&a.node_selector);
    s.tolerations = a.tolerations.iter().map(toleration).collect();
    s.topology_spread_constraints = a.spread.iter().map(|d| spread(&a.name, *d)).collect();
    s.affinity = affinity(a)?.map(Box::new);
    s.local_storage = local_storage(a);
    if let Some(t) = a.service_type {
        s.service.type_ = match t {
            ServiceTypeArg::ClusterIp => ServiceType::ClusterIP,
            ServiceTypeArg::NodePort => ServiceType::NodePort,
            ServiceTypeArg::LoadBalancer => ServiceType::LoadBalancer,
        };
    }
    s.service.annotations = map(&a.service_annotations);
    s.ingress = ingress(a).map(Box::new);
    Ok(s)
}

/// Removes from the object `value` every field equal to the same field of `default` (one
/// level deep: required fields inside a partly defaulted object must stay).
pub fn prune(value: &mut Value, default: &Value) {
    let (Value::Object(v), Value::Object(d)) = (value, default) else {
        return;
    };
    v.retain(|k, field| d.get(k) != Some(field));
}

/// Prunes the spec: whole fields equal to their defaults, then the defaulted fields inside
/// localStorage, service and ingress (every field there has a default, except the hostname).
fn prune_spec(spec: &mut Value, defaults: &Value, ingress_defaults: Option<&Value>) {
    // objectStorage holds the required bucket: never pruned as a whole.
    let object_storage = spec.get("objectStorage").cloned();
    prune(spec, defaults);
    if let (Some(obj), Some(os)) = (spec.as_object_mut(), object_storage) {
        obj.insert("objectStorage".to_string(), os);
    }
    for key in ["localStorage", "service"] {
        if let (Some(v), Some(d)) = (spec.get_mut(key), defaults.get(key)) {
            prune(v, d);
        }
    }
    if let (Some(v), Some(d)) = (spec.get_mut("ingress"), ingress_defaults) {
        prune(v, d);
    }
    if let Some(obj) = spec.as_object_mut() {
        obj.retain(|_, v| !matches!(v, Value::Object(m) if m.is_empty()));
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::Output(e.to_string()))
}

/// Builds the fleet, checks it with the admission rules, and makes the document.
pub fn build(a: &InitArgs, namespace: Option<&str>) -> Result<Built> {
    let mut fleet = CelldFleet::new(&a.name, spec(a)?);
    fleet.metadata.namespace = namespace.map(str::to_string);
    celld_api::validate::fleet(&fleet).map_err(|e| Error::InvalidSpec(hints::explain(&e)))?;

    let mut document = to_value(&fleet)?;
    let defaults = to_value(&CelldFleetSpec::with_bucket(a.bucket.clone()))?;
    let ingress_defaults = match &a.hostname {
        Some(host) => {
            let d: IngressSpec = serde_json::from_value(serde_json::json!({ "hostname": host }))
                .map_err(|e| Error::Output(e.to_string()))?;
            let mut d = to_value(&d)?;
            if let Some(obj) = d.as_object_mut() {
                obj.remove("hostname");
            }
            Some(d)
        }
        None => None,
    };
    if let Some(spec) = document.get_mut("spec") {
        prune_spec(spec, &defaults, ingress_defaults.as_ref());
    }
    Ok(Built { fleet, document })
}
