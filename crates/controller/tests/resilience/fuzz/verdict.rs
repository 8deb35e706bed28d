//! What became of a case: refused by admission (naming a field, or not), or admitted and then
//! reconciled to a status that says what is going on, or silent.

use crate::conditions::{find, json_has, summary};
use kube::api::DynamicObject;
use serde_json::Value;
use std::collections::BTreeSet;

/// What the API server answered to an apply.
#[derive(Debug, Clone)]
pub enum Admission {
    Admitted {
        generation: i64,
    },
    Refused {
        message: String,
    },
    /// The API server could not read the request at all: server-side apply sends YAML, which
    /// cannot carry some characters. No admission rule is involved.
    Unreadable {
        message: String,
    },
    /// Neither: a server error, a timeout...
    Failed {
        error: String,
    },
}

impl Admission {
    pub fn of(result: Result<DynamicObject, kube::Error>) -> Self {
        match result {
            Ok(object) => Admission::Admitted {
                generation: object.metadata.generation.unwrap_or(1),
            },
            Err(kube::Error::Api(status))
                if status.code == 400 && status.message.contains("error decoding YAML") =>
            {
                Admission::Unreadable {
                    message: status.message,
                }
            }
            Err(kube::Error::Api(status)) if status.code == 400 || status.code == 422 => {
                Admission::Refused {
                    message: status.message,
                }
            }
            // Server-side apply answers a value of the wrong type (a number for a string) with
            // 500 and the field's path: a refusal all the same.
            Err(kube::Error::Api(status))
                if status.code == 500
                    && status
                        .message
                        .contains("failed to create typed patch object") =>
            {
                Admission::Refused {
                    message: status.message,
                }
            }
            Err(e) => Admission::Failed {
                error: e.to_string(),
            },
        }
    }
}

/// Whether a refusal names the field it refuses (`spec.…` or `metadata.…`).
pub fn names_a_field(message: &str) -> bool {
    message.contains("spec.") || message.contains("metadata.")
}

/// The fleet's children that exist, as `Kind/name`.
pub type Children = BTreeSet<String>;

/// How a reconciled fleet ended: `Ready=False/NoDeployment`, with the Degraded reason if any.
pub fn ending(fleet: Option<&Value>) -> String {
    let Some(fleet) = fleet else {
        return "no fleet".into();
    };
    let reason = |type_: &str| {
        find(fleet, type_).map(|c| {
            format!(
                "{type_}={}/{}",
                c["status"].as_str().unwrap_or("?"),
                c["reason"].as_str().unwrap_or("?")
            )
        })
    };
    let mut ending = reason("Ready").unwrap_or_else(|| "no Ready".into());
    if json_has(fleet, "Degraded", "True")
        && let Some(degraded) = reason("Degraded")
    {
        ending = format!("{ending}, {degraded}");
    }
    ending
}

/// Why an admitted fleet does not count as reconciled yet; `None` when it does: its status
/// describes its generation, says Ready True or False with a reason, and either every child it
/// should have exists or a condition (Degraded=True, StorageResolved=False) says why not.
pub fn fleet_pending(
    fleet: Option<&Value>,
    generation: i64,
    children: &Children,
    gateway_api: bool,
) -> Option<String> {
    let Some(fleet) = fleet else {
        return Some("the fleet is gone".into());
    };
    let observed = fleet["status"]["observedGeneration"].as_i64().unwrap_or(0);
    if observed < generation {
        return Some(format!(
            "status describes generation {observed}, not {generation} ({})",
            summary(fleet)
        ));
    }
    let ready = find(fleet, "Ready");
    let ready_ok = ready.is_some_and(|c| {
        (c["status"] == "True" || c["status"] == "False")
            && c["reason"].as_str().is_some_and(|r| !r.is_empty())
    });
    if !ready_ok {
        return Some(format!(
            "no Ready condition with a reason ({})",
            summary(fleet)
        ));
    }
    if json_has(fleet, "Degraded", "True") || json_has(fleet, "StorageResolved", "False") {
        return None;
    }
    let missing: Vec<String> = expected_children(fleet, gateway_api)
        .into_iter()
        .filter(|c| !children.contains(c))
        .collect();
    if missing.is_empty() {
        None
    } else {
        Some(format!(
            "missing {} and no condition says why ({})",
            missing.join(", "),
            summary(fleet)
        ))
    }
}

/// The children a fleet should have, from its stored spec.
fn expected_children(fleet: &Value, gateway_api: bool) -> Vec<String> {
    let name = fleet["metadata"]["name"].as_str().unwrap_or_default();
    let spec = &fleet["spec"];
    let mut expected = vec![
        format!("StatefulSet/{name}"),
        format!("Service/{name}"),
        format!("Service/{name}-peer"),
        format!("NetworkPolicy/{name}"),
    ];
    // A fleet held at 0 nodes (no deployment yet) has no PodDisruptionBudget.
    let held = fleet["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Deployed" && c["reason"] == "NoDeployment");
    if spec["replicas"].as_i64().unwrap_or(1) > 1 && !held {
        expected.push(format!("PodDisruptionBudget/{name}"));
    }
    let ingress = &spec["ingress"];
    if ingress["ingressClass"].is_string() {
        expected.push(format!("Ingress/{name}"));
    }
    let routed = ingress["gatewayRefs"]
        .as_array()
        .is_some_and(|r| !r.is_empty());
    if routed && gateway_api {
        expected.push(format!("HTTPRoute/{name}"));
    }
    expected
}

/// Why an admitted store does not count as reconciled yet; `None` when its status describes its
/// generation and says Ready True or False with a reason.
pub fn store_pending(store: Option<&Value>, generation: i64) -> Option<String> {
    let Some(store) = store else {
        return Some("the store is gone".into());
    };
    let observed = store["status"]["observedGeneration"].as_i64().unwrap_or(0);
    let ready_ok = find(store, "Ready").is_some_and(|c| {
        (c["status"] == "True" || c["status"] == "False")
            && c["reason"].as_str().is_some_and(|r| !r.is_empty())
    });
    if observed >= generation && ready_ok {
        None
    } else {
        Some(format!(
            "store status for generation {observed} of {generation}: {}",
            summary(store)
        ))
    }
}
