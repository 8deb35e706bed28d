//! Condition types the operator reports, and a helper that keeps `lastTransitionTime` stable.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// The fleet serves its Worker: nodes ready, storage resolved, a deployment exists (or it runs
/// no node because spec.replicas is 0, as a Deployment scaled to 0 stays Available).
pub const READY: &str = "Ready";
/// The fleet is moving towards its spec (rolling pods, scaling).
pub const PROGRESSING: &str = "Progressing";
/// Something keeps the fleet from its spec (bad storage reference, missing route API, ...).
pub const DEGRADED: &str = "Degraded";
/// The object-storage connection and credentials Secret resolve.
pub const STORAGE_RESOLVED: &str = "StorageResolved";
/// The bucket prefix holds a Worker deployment (deploy/current.json).
pub const DEPLOYED: &str = "Deployed";
/// Every ready node serves the version the deployment pointer names (False while one adopts
/// it or refused it; Unknown when a node's state cannot be read).
pub const ADOPTED: &str = "Adopted";
/// kstatus' abnormal-true condition: True while the fleet is on its way to its spec (a rollout,
/// nodes not ready yet, nodes adopting a version, a failure being retried).
pub const RECONCILING: &str = "Reconciling";
/// kstatus' abnormal-true condition: True when the fleet cannot reach its spec until someone
/// acts (a bad reference or credentials, a refused child, image or version, a rollout past its
/// deadline, no Worker deployed yet).
pub const STALLED: &str = "Stalled";
/// The bucket serves the revision spec.source names (absent without spec.source): False while
/// it is published, when publishing failed, is suspended, or someone else deployed (Drifted).
pub const SOURCE_SYNCED: &str = "SourceSynced";
/// spec.autoscaling owns the number of nodes and reads its signals (absent without
/// spec.autoscaling): False when the nodes' state cannot be read or their celld reports no
/// capacity signals, or when something else (a HorizontalPodAutoscaler, `kubectl scale`) set
/// spec.replicas, which the autoscaler then ignores.
pub const AUTOSCALING: &str = "Autoscaling";
/// Nodes added by spec.autoscaling take existing load (absent without spec.autoscaling): False
/// while spec.env does not set CELLD_IDLE_EVICT_S, without which celld moves only cells that
/// hibernate on their own to a new node.
pub const IDLE_EVICTION: &str = "IdleEviction";
/// spec.env uses a setting a celld release holds until every node runs it (celld 0.6.1's
/// CELLD_LTX_RETENTION_SECS, a raised CELLD_MAX_ASSET_FILE_BYTES; absent when it uses none):
/// True while the operator keeps it from the nodes, naming the setting and the nodes not there
/// yet, or the image that must change first.
pub const SETTINGS_HELD: &str = "SettingsHeld";
/// True while the fleet's nodes fence themselves over and over: celld exits with code 3 when
/// it loses its lease's compare-and-swap (celld #239: an object store answering lease renewals
/// with 409 ConditionalRequestConflict); present only while repeated fences are recent, naming
/// the nodes.
pub const NODES_FENCING: &str = "NodesFencing";
/// True when a node's replacement can lose acknowledged writes: spec.durability is `fleet`
/// (a write is acknowledged once a follower fsynced it, before the bucket has it) on Ephemeral
/// work storage (an emptyDir, erased with its pod). Admitted, and said here with one Warning.
pub const DURABILITY_AT_RISK: &str = "DurabilityAtRisk";
/// The Ingress or HTTPRoute exists as asked (True also when none is asked for).
pub const ROUTE_READY: &str = "RouteReady";
/// On a CelldPreview: whether an expired or deleted preview's bucket prefix was emptied.
pub const DATA_REMOVED: &str = "DataRemoved";

/// `True`, `False` or `Unknown` as Kubernetes spells it.
pub fn status_str(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "True",
        Some(false) => "False",
        None => "Unknown",
    }
}

/// Builds a condition for `generation`, keeping the transition time of `previous` when the
/// status did not change, so a reconcile that changes nothing writes the same conditions.
pub fn make(
    previous: &[Condition],
    type_: &str,
    status: Option<bool>,
    reason: &str,
    message: impl Into<String>,
    generation: Option<i64>,
    now: Timestamp,
) -> Condition {
    let status = status_str(status).to_string();
    let last_transition_time = previous
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or(Time(now));
    Condition {
        type_: type_.to_string(),
        status,
        reason: reason.to_string(),
        message: message.into(),
        observed_generation: generation,
        last_transition_time,
    }
}

/// The condition of `type_` in `conditions`, if any.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_transition_time_while_status_holds() {
        let t0 = Timestamp::from_second(1_000).unwrap();
        let t1 = Timestamp::from_second(2_000).unwrap();
        let first = make(&[], READY, Some(true), "Serving", "ok", Some(1), t0);
        let again = make(
            std::slice::from_ref(&first),
            READY,
            Some(true),
            "Serving",
            "ok",
            Some(2),
            t1,
        );
        assert_eq!(again.last_transition_time, Time(t0));
        let flipped = make(&[first], READY, Some(false), "NoNodes", "down", Some(2), t1);
        assert_eq!(flipped.last_transition_time, Time(t1));
        assert_eq!(flipped.status, "False");
    }
}
