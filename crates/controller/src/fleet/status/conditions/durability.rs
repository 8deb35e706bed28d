//! DurabilityAtRisk: whether a node's replacement can lose writes its fleet acknowledged (celld
//! guarantees.md: with `fleet` durability "a follower disk can contain acknowledged writes that
//! the bucket does not yet contain", and an emptyDir is erased with its pod).

use super::{Cond, cond};
use crate::fleet::status::observation::Acknowledged;
use celld_api::Durability;
use celld_api::conditions::DURABILITY_AT_RISK;
use celld_api::reasons::Reason;

/// The condition, from when the nodes acknowledge a write and on which work storage.
pub fn condition(a: Acknowledged) -> Cond {
    match (a.durability, a.ephemeral) {
        (Durability::Fleet, true) => cond(
            DURABILITY_AT_RISK,
            Some(true),
            Reason::FleetDurabilityOnEphemeral,
            "spec.durability is fleet on Ephemeral work storage: a write is acknowledged once a follower's disk has it, before the bucket does, and that disk is an emptyDir erased with its pod, so replacing pods (a rollout, a drain, a lost machine) can lose acknowledged writes; set spec.localStorage.type to Persistent, or remove spec.durability (bucket, the default on Ephemeral)",
        ),
        (Durability::Fleet, false) => cond(
            DURABILITY_AT_RISK,
            Some(false),
            Reason::PersistentWorkStorage,
            "fleet durability on Persistent work storage: a follower's disk, which can hold acknowledged writes the bucket does not have yet, outlives its pod",
        ),
        (Durability::Bucket, _) => cond(
            DURABILITY_AT_RISK,
            Some(false),
            Reason::BucketDurability,
            format!(
                "bucket durability{}: a write is acknowledged once the bucket has it",
                if a.asked {
                    ""
                } else {
                    " (the default on Ephemeral work storage)"
                }
            ),
        ),
    }
}
