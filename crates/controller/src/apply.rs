//! The one write path: server-side apply with a single field manager, skipped when the live
//! object already holds what the operator wants, and pruning of children no longer wanted.

use crate::children::MANAGER;
use crate::error::Error;
use crate::metrics::Metrics;
use k8s_openapi::NamespaceResourceScope;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::fmt::Debug;

/// Annotation with the hash of the object as last applied by the operator.
pub const APPLIED_HASH: &str = "platform.celld.dev/applied-hash";

/// A child kind the operator applies and prunes.
pub trait Child:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Child for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// What applying a child did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The live object already matched; nothing was sent.
    Unchanged,
    /// The object was created or changed.
    Applied,
}

fn hash(value: &Value) -> String {
    hex::encode(&Sha256::digest(value.to_string().as_bytes())[..8])
}

/// Applies `desired` unless the live object already carries it. Returns the live object after
/// the call and what happened.
pub async fn apply<K: Child>(
    api: &Api<K>,
    mut desired: K,
    metrics: &Metrics,
) -> Result<(K, Outcome), Error> {
    let kind = K::kind(&()).to_string();
    let name = desired.name_any();
    let value = serde_json::to_value(&desired).map_err(|source| Error::Serialize {
        what: format!("{kind} {name}"),
        source,
    })?;
    let applied_hash = hash(&value);
    desired
        .annotations_mut()
        .insert(APPLIED_HASH.into(), applied_hash.clone());
    let live = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::kube(format!("reading {kind} {name}"), e))?;
    if let Some(live) = live {
        let same_hash = live.annotations().get(APPLIED_HASH) == Some(&applied_hash);
        let live_value = serde_json::to_value(&live).map_err(|source| Error::Serialize {
            what: format!("{kind} {name}"),
            source,
        })?;
        if same_hash && contains(&live_value, &value) {
            return Ok((live, Outcome::Unchanged));
        }
    }
    let params = PatchParams::apply(MANAGER).force();
    let applied = api
        .patch(&name, &params, &Patch::Apply(&desired))
        .await
        .map_err(|e| Error::kube(format!("applying {kind} {name}"), e))?;
    metrics.write(&kind, "apply");
    Ok((applied, Outcome::Applied))
}

/// Deletes the children of kind `K` labelled for the fleet and owned by it (uid) whose names
/// are not in `keep`. Returns the names deleted.
pub async fn prune<K: Child>(
    api: &Api<K>,
    selector: &str,
    owner_uid: &str,
    keep: &BTreeSet<String>,
    metrics: &Metrics,
) -> Result<Vec<String>, Error> {
    let kind = K::kind(&()).to_string();
    let list = api
        .list_metadata(&ListParams::default().labels(selector))
        .await
        .map_err(|e| Error::kube(format!("listing {kind} objects to prune"), e))?;
    let mut deleted = Vec::new();
    for obj in list {
        let name = obj.name_any();
        let owned = obj
            .owner_references()
            .iter()
            .any(|o| o.uid == owner_uid && o.controller == Some(true));
        if owned && !keep.contains(&name) {
            match api.delete(&name, &DeleteParams::background()).await {
                Ok(_) => {
                    metrics.write(&kind, "delete");
                    deleted.push(name);
                }
                Err(kube::Error::Api(s)) if s.is_not_found() => {}
                Err(e) => return Err(Error::kube(format!("deleting {kind} {name}"), e)),
            }
        }
    }
    Ok(deleted)
}

/// Whether `live` holds every field of `want`: objects key by key, lists element by element
/// (same length), scalars equal. Fields the API server adds (defaults, status) are ignored;
/// quantities compare by value, since the server canonicalises them (1000m is stored as 1).
pub fn contains(live: &Value, want: &Value) -> bool {
    match (live, want) {
        (Value::Object(l), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| l.get(k).is_some_and(|lv| contains(lv, wv))),
        (Value::Array(l), Value::Array(w)) => {
            l.len() == w.len() && l.iter().zip(w).all(|(lv, wv)| contains(lv, wv))
        }
        (Value::Number(l), Value::Number(w)) => l.as_f64() == w.as_f64(),
        (Value::String(l), Value::String(w)) => l == w || same_quantity(l, w),
        _ => live == want,
    }
}

fn same_quantity(a: &str, b: &str) -> bool {
    match (quantity(a), quantity(b)) {
        (Some(x), Some(y)) => (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs()),
        _ => false,
    }
}

/// The value of a Kubernetes quantity such as 500m, 1Gi or 2e3; None if it is not one.
fn quantity(s: &str) -> Option<f64> {
    const SUFFIXES: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let s = s.trim();
    let (number, factor) = SUFFIXES
        .iter()
        .find_map(|(suffix, f)| s.strip_suffix(suffix).map(|n| (n, *f)))
        .unwrap_or((s, 1.0));
    if number.is_empty()
        || !number.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == '+')
    {
        return None;
    }
    number.parse::<f64>().ok().map(|n| n * factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_defaults_do_not_count_as_drift() {
        let live = json!({"spec": {"replicas": 1, "revisionHistoryLimit": 10, "ports": [{"port": 80, "protocol": "TCP"}]}});
        let want = json!({"spec": {"replicas": 1, "ports": [{"port": 80}]}});
        assert!(contains(&live, &want));
    }

    #[test]
    fn changed_or_missing_fields_are_drift() {
        let live = json!({"spec": {"replicas": 1, "ports": [{"port": 80}]}});
        assert!(!contains(&live, &json!({"spec": {"replicas": 2}})));
        assert!(!contains(&live, &json!({"spec": {"paused": true}})));
        assert!(!contains(
            &live,
            &json!({"spec": {"ports": [{"port": 80}, {"port": 81}]}})
        ));
    }

    #[test]
    fn canonicalised_quantities_are_equal() {
        assert!(contains(&json!({"cpu": "1"}), &json!({"cpu": "1000m"})));
        assert!(contains(
            &json!({"memory": "1Gi"}),
            &json!({"memory": "1024Mi"})
        ));
        assert!(contains(&json!({"cpu": "500m"}), &json!({"cpu": "0.5"})));
        assert!(!contains(
            &json!({"memory": "1Gi"}),
            &json!({"memory": "1G"})
        ));
        assert!(!contains(&json!({"name": "m"}), &json!({"name": "k"})));
    }
}
