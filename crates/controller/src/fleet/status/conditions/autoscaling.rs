//! Autoscaling (spec.autoscaling owns the node count and reads its signals) and IdleEviction
//! (the nodes it adds take existing load), both only for a fleet with spec.autoscaling.

use super::{Cond, cond};
use crate::fleet::status::observation::Observed;
use celld_api::conditions::{AUTOSCALING, IDLE_EVICTION};
use celld_api::contract::env::IDLE_EVICT;
use celld_api::reasons::Reason;

/// The two conditions, or none without spec.autoscaling.
pub fn conditions(o: &Observed<'_>) -> [Option<Cond>; 2] {
    let Some(a) = o.autoscale.as_deref() else {
        return [None, None];
    };
    let v = &a.scaled.verdict;
    let autoscaling = cond(AUTOSCALING, v.status, v.reason, v.message.clone());
    let idle = if a.idle_evict {
        cond(
            IDLE_EVICTION,
            Some(true),
            Reason::IdleEvictionSet,
            format!(
                "spec.env sets {IDLE_EVICT}: idle cells hibernate, and celld moves them to nodes spec.autoscaling adds"
            ),
        )
    } else {
        cond(
            IDLE_EVICTION,
            Some(false),
            Reason::IdleEvictionUnset,
            format!(
                "spec.env does not set {IDLE_EVICT}: celld moves only cells that hibernate on their own, so nodes spec.autoscaling adds take new activations but little existing load; set it (for example to 300) for them to take their share"
            ),
        )
    };
    [Some(autoscaling), Some(idle)]
}
