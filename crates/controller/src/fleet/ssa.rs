//! The one write path: server-side apply with a single field manager, skipped when the live
//! object already holds what the operator wants, and pruning of children no longer wanted.

use crate::cache::owner_index::controller_uid;
use crate::children::{Child, MANAGER};
use crate::error::Error;
use crate::failure::Failure;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::fmt::Debug;

/// Annotation with the hash of the object as last applied by the operator.
pub const APPLIED_HASH: &str = "platform.celld.dev/applied-hash";

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

/// Reads the live child `name`, if it exists.
pub async fn read<K: Child>(api: &Api<K>, name: &str) -> Result<Option<K>, Error> {
    api.get_opt(name)
        .await
        .map_err(|e| Error::kube(format!("reading {} {name}", K::kind(&())), e))
}

/// Applies `desired` unless `live` (the object as just read) already carries it; with `live`
/// None the object is applied unconditionally. Returns the object after the call and what
/// happened.
pub async fn apply<K: Child>(
    api: &Api<K>,
    mut desired: K,
    live: Option<&K>,
) -> Result<(K, Outcome), Error> {
    let kind = K::kind(&()).to_string();
    let name = desired.name_any();
    let serialize = |source| Error::Serialize {
        what: format!("{kind} {name}"),
        source,
    };
    let value = serde_json::to_value(&desired).map_err(serialize)?;
    let applied_hash = hash(&value);
    desired
        .annotations_mut()
        .insert(APPLIED_HASH.into(), applied_hash.clone());
    if let Some(live) = live {
        let same_hash = live.annotations().get(APPLIED_HASH) == Some(&applied_hash);
        let live_value = serde_json::to_value(live).map_err(serialize)?;
        if same_hash && contains(&live_value, &value) {
            return Ok((live.clone(), Outcome::Unchanged));
        }
    }
    let params = PatchParams::apply(MANAGER).force();
    let applied = api
        .patch(&name, &params, &Patch::Apply(&desired))
        .await
        .map_err(|e| Error::kube(format!("applying {kind} {name}"), e))?;
    Ok((applied, Outcome::Applied))
}

/// What pruning one kind did.
#[derive(Debug, Default)]
pub struct Pruned {
    /// Names deleted.
    pub deleted: Vec<String>,
    /// Listing or deletions that failed; the other deletions were still sent.
    pub failures: Vec<Failure>,
}

/// Deletes the children of kind `K` labelled for the fleet and owned by it (uid) whose names
/// are not in `keep`.
pub async fn prune<K: Child>(
    api: &Api<K>,
    selector: &str,
    owner_uid: &str,
    keep: &BTreeSet<String>,
) -> Pruned {
    let kind = K::kind(&()).to_string();
    let mut pruned = Pruned::default();
    let list = match api
        .list_metadata(&ListParams::default().labels(selector))
        .await
    {
        Ok(list) => list,
        Err(e) => {
            let e = Error::kube(format!("listing {kind} objects to prune"), e);
            pruned.failures.push(Failure::child(&kind, "", "list", &e));
            return pruned;
        }
    };
    let unwanted = list.into_iter().filter_map(|obj| {
        let owned = controller_uid(&obj) == Some(owner_uid);
        let name = obj.name_any();
        (owned && !keep.contains(&name)).then_some(name)
    });
    delete_all(api, unwanted).await
}

/// Deletes the children of kind `K` named `names`; one failing deletion does not stop the
/// others, and a child already gone is no failure.
pub async fn delete_all<K: Child>(api: &Api<K>, names: impl IntoIterator<Item = String>) -> Pruned {
    let kind = K::kind(&()).to_string();
    let mut pruned = Pruned::default();
    for name in names {
        match api.delete(&name, &DeleteParams::background()).await {
            Ok(_) => {
                pruned.deleted.push(name);
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => {
                let e = Error::kube(format!("deleting {kind} {name}"), e);
                pruned
                    .failures
                    .push(Failure::child(&kind, &name, "delete", &e));
            }
        }
    }
    pruned
}

/// Whether `live` holds every field of `want`, that is whether the operator's own values are
/// all still there: objects key by key; lists of named objects (Kubernetes merges these by key,
/// so other field managers may add entries: env, ports, containers, volumes) by finding each
/// wanted element, in order, among the live ones; other lists (replaced as a whole by an apply)
/// element by element with the same length; scalars equal. Fields the API server or other
/// managers add are ignored; quantities compare by value, since the server canonicalises them
/// (1000m is stored as 1).
pub fn contains(live: &Value, want: &Value) -> bool {
    match (live, want) {
        (Value::Object(l), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| l.get(k).is_some_and(|lv| contains(lv, wv))),
        (Value::Array(l), Value::Array(w)) if keyed_by_name(w) => {
            // Greedy matching finds an in-order match whenever one exists: taking the earliest
            // live element for each wanted one leaves the most room for the rest.
            let mut rest = l.iter();
            w.iter().all(|wv| rest.any(|lv| contains(lv, wv)))
        }
        (Value::Array(l), Value::Array(w)) => {
            l.len() == w.len() && l.iter().zip(w).all(|(lv, wv)| contains(lv, wv))
        }
        (Value::Number(l), Value::Number(w)) => l.as_f64() == w.as_f64(),
        (Value::String(l), Value::String(w)) => l == w || same_quantity(l, w),
        _ => live == want,
    }
}

/// Whether a wanted list is one of named objects.
fn keyed_by_name(want: &[Value]) -> bool {
    !want.is_empty()
        && want
            .iter()
            .all(|v| v.get("name").is_some_and(Value::is_string))
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

    #[test]
    fn entries_other_managers_add_to_named_lists_are_not_drift() {
        let want = json!({"spec": {"ports": [{"name": "http", "port": 80}]}});
        let live = json!({"spec": {"ports": [
            {"name": "http", "port": 80, "protocol": "TCP"},
            {"name": "metrics", "port": 9090},
        ]}});
        assert!(contains(&live, &want));
        let before = json!({"spec": {"ports": [
            {"name": "metrics", "port": 9090},
            {"name": "http", "port": 80},
        ]}});
        assert!(contains(&before, &want));
    }

    #[test]
    fn edited_or_deleted_named_entries_are_drift() {
        let want = json!({"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]});
        let edited = json!({"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]});
        let deleted = json!({"env": [{"name": "A", "value": "1"}, {"name": "X", "value": "2"}]});
        let reordered = json!({"env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}]});
        let kept = json!({"env": [
            {"name": "A", "value": "1"}, {"name": "X", "value": "9"}, {"name": "B", "value": "2"},
        ]});
        assert!(!contains(&edited, &want));
        assert!(!contains(&deleted, &want));
        assert!(
            !contains(&reordered, &want),
            "order is part of what is applied"
        );
        assert!(contains(&kept, &want));
        let port = json!({"ports": [{"name": "http", "port": 80}]});
        assert!(!contains(
            &json!({"ports": [{"name": "http", "port": 81}]}),
            &port
        ));
    }

    #[test]
    fn entries_added_to_lists_replaced_whole_are_drift() {
        // A NetworkPolicy's ingress rules and an Ingress's rules are atomic lists: an extra
        // rule would open the fleet to more than the operator allows.
        let want = json!({"ingress": [{"from": [{"podSelector": {}}], "ports": [{"port": 8081}]}]});
        let opened = json!({"ingress": [
            {"from": [{"podSelector": {}}], "ports": [{"port": 8081}]},
            {"ports": [{"port": 8081}]},
        ]});
        assert!(!contains(&opened, &want));
        assert!(!contains(
            &json!({"args": ["a", "x"]}),
            &json!({"args": ["a"]})
        ));
        assert!(contains(&json!({"args": []}), &json!({"args": []})));
        assert!(!contains(&json!({"args": ["a"]}), &json!({"args": []})));
    }
}
