//! The nodes that hold a rollout past its deadline, named for the Progressing condition and its
//! Warning Event: a node that does not exist, is stopping, is not ready, or runs an older pod
//! template than the StatefulSet's. Pure; [`probe`](crate::fleet::probe) lists the pods.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use std::collections::BTreeMap;

/// The label the StatefulSet controller puts on each pod: the revision of its template.
const REVISION_LABEL: &str = "controller-revision-hash";

/// The most nodes named; the rest are counted.
const MOST_NAMED: usize = 5;

/// The nodes of the fleet `name` (`replicas` of them) that hold its rollout, among `pods`,
/// against the `statefulset`'s update revision, each as `NODE (why)`.
pub fn holders(
    name: &str,
    replicas: i32,
    statefulset: Option<&StatefulSet>,
    pods: &[Pod],
) -> Vec<String> {
    let update_revision = statefulset
        .and_then(|s| s.status.as_ref())
        .and_then(|s| s.update_revision.as_deref());
    let by_name: BTreeMap<String, &Pod> = pods.iter().map(|p| (p.name_any(), p)).collect();
    let held: Vec<String> = (0..replicas.max(0))
        .map(|ordinal| format!("{name}-{ordinal}"))
        .filter_map(|node| {
            let why = match by_name.get(&node) {
                None => "missing",
                Some(pod) if pod.metadata.deletion_timestamp.is_some() => "stopping",
                Some(pod) if !ready(pod) => "not ready",
                Some(pod)
                    if update_revision.is_some()
                        && pod.labels().get(REVISION_LABEL).map(String::as_str)
                            != update_revision =>
                {
                    "old pod template"
                }
                Some(_) => return None,
            };
            Some(format!("{node} ({why})"))
        })
        .collect();
    if held.len() <= MOST_NAMED {
        return held;
    }
    let more = held.len() - MOST_NAMED;
    let mut named = held.into_iter().take(MOST_NAMED).collect::<Vec<_>>();
    named.push(format!("{more} more"));
    named
}

/// Whether the pod's Ready condition is True.
fn ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, ready: bool, revision: &str, stopping: bool) -> Pod {
        let mut pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {REVISION_LABEL: revision}},
            "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
        }))
        .unwrap();
        if stopping {
            pod.metadata.deletion_timestamp =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                ));
        }
        pod
    }

    fn statefulset(update_revision: &str) -> StatefulSet {
        serde_json::from_value(json!({"metadata": {"name": "web"}, "status": {"replicas": 4, "updateRevision": update_revision}})).unwrap()
    }

    #[test]
    fn names_each_node_that_holds_the_rollout_and_why() {
        let pods = [
            pod("web-0", true, "web-2", false),
            pod("web-1", false, "web-2", false),
            pod("web-2", true, "web-1", false),
            pod("web-4", true, "web-2", true),
        ];
        assert_eq!(
            holders("web", 5, Some(&statefulset("web-2")), &pods),
            [
                "web-1 (not ready)",
                "web-2 (old pod template)",
                "web-3 (missing)",
                "web-4 (stopping)"
            ]
        );
        // Without an update revision, only readiness and existence count.
        assert_eq!(holders("web", 3, None, &pods), ["web-1 (not ready)"]);
    }

    #[test]
    fn many_holders_are_named_up_to_five_and_counted() {
        let held = holders("big", 8, None, &[]);
        assert_eq!(held.len(), 6);
        assert_eq!(held[0], "big-0 (missing)");
        assert_eq!(held[5], "3 more");
    }
}
