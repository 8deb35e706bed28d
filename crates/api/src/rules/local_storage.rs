//! Transition rules of `spec.localStorage`: what the nodes' StatefulSet fixes when it is
//! created. Its volume claim templates are immutable, so the storage type may not change at all,
//! and a Persistent fleet keeps the size and class of its claims. An Ephemeral fleet's size is an
//! emptyDir limit in the pod template and may change freely.

use kube::core::Rule;

/// The message of a refused type change, for either direction.
pub const TYPE_CHANGE_MESSAGE: &str = "spec.localStorage.type cannot change from Ephemeral to Persistent or back on an existing fleet (its StatefulSet's volume claims are fixed when it is created): keep the type, or delete the fleet and create it again with the new type (the deployed Worker stays in the bucket; the PVCs of a Persistent fleet follow whenDeleted)";

/// The message of a refused size or class change of a Persistent fleet.
pub const PERSISTENT_CLAIM_MESSAGE: &str = "spec.localStorage.size and spec.localStorage.storageClassName cannot change while a fleet uses Persistent storage (a StatefulSet's volume claims are immutable): keep them, or delete the fleet (its PVCs follow whenDeleted) and create it again with the new ones";

/// `type` keeps its value across updates.
pub fn type_unchanged_rule() -> Rule {
    Rule::new("self.type == oldSelf.type").message(TYPE_CHANGE_MESSAGE)
}

/// A fleet that was and stays Persistent keeps the size and class of its volume claims. A type
/// change is left to [`type_unchanged_rule`], so it is refused with one message only.
pub fn persistent_claim_unchanged_rule() -> Rule {
    Rule::new(
        "self.type != 'Persistent' || oldSelf.type != 'Persistent' || (self.size == oldSelf.size && (has(self.storageClassName) ? (has(oldSelf.storageClassName) && self.storageClassName == oldSelf.storageClassName) : !has(oldSelf.storageClassName)))",
    )
    .message(PERSISTENT_CLAIM_MESSAGE)
}
