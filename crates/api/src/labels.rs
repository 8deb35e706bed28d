//! Label, annotation and environment names the operator owns. Users may not set them on a
//! fleet's pods: the admission rules refuse them, and the operator would overwrite them.

use std::collections::BTreeMap;

/// Prefix of every label and annotation key the operator owns on the objects it manages.
pub const OWNED_PREFIX: &str = "platform.celld.dev/";
/// Label naming the fleet an object belongs to (part of every selector).
pub const FLEET: &str = "platform.celld.dev/fleet";
/// Label naming an object's role in the fleet: `node` for celld pods, `deploy` for deploy pods.
pub const ROLE: &str = "platform.celld.dev/role";
/// Role value of the celld node pods.
pub const ROLE_NODE: &str = "node";
/// Role value of the short-lived deploy pods started by `kubectl celld deploy`.
pub const ROLE_DEPLOY: &str = "deploy";
/// The labels selecting exactly the celld node pods of the fleet `fleet`: the selector of its
/// StatefulSet, Services, PodDisruptionBudget and NetworkPolicy.
pub fn node_selector(fleet: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (FLEET.to_string(), fleet.to_string()),
        (ROLE.to_string(), ROLE_NODE.to_string()),
    ])
}

/// [`node_selector`] in the string form of a label selector (`key=value,key=value`), as the
/// fleet's status and its scale subresource report it.
pub fn node_selector_string(fleet: &str) -> String {
    node_selector(fleet)
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Pod-template annotation holding a hash of the configuration the pods were started with, so a
/// change of store, Secret name or Secret contents rolls the fleet.
pub const CONFIG_HASH: &str = "platform.celld.dev/config-hash";

/// StatefulSet annotation holding the image a rolling celld upgrade started from, while the
/// operator moves the nodes to the new one node by node.
pub const ROLLING_FROM: &str = "platform.celld.dev/rolling-from";

/// StatefulSet annotation holding when a full stop found every old node gone (RFC 3339): the new
/// image starts once their leases expired, one lease lifetime later.
pub const STOPPED_AT: &str = "platform.celld.dev/nodes-stopped-at";

/// StatefulSet annotation holding the highest celld version the fleet's nodes were given: some
/// versions may never start again once a newer one ran.
pub const HIGHEST_VERSION: &str = "platform.celld.dev/highest-celld-version";

/// Annotation `kubectl celld deploy` and `rollback` set on the CelldFleet (RFC 3339 time) after
/// they changed its deployment pointer: any change of a fleet makes the operator reconcile it,
/// so it reads the new pointer at once instead of at its next periodic look.
pub const DEPLOYED_AT: &str = "platform.celld.dev/deployed-at";

/// Annotation that suspends publishing from a fleet's spec.source; its value says why. GitOps
/// tools never set it, so a suspension made by hand (or by `kubectl celld rollback`) survives
/// their next sync. Remove it to publish again.
pub const SOURCE_SUSPENDED: &str = "platform.celld.dev/source-suspended";

/// Annotation asking the operator to publish a fleet's spec.source again (any new value, such
/// as the time), for a tag that moved or after a fleet stalled on failed publishes.
pub const RECONCILE_REQUESTED_AT: &str = "platform.celld.dev/reconcile-requested-at";

/// Label on a preview's fleet: the name of the CelldPreview it serves (its own name).
pub const PREVIEW: &str = "platform.celld.dev/preview";

/// Label on a preview's fleet: the fleet it is a preview of.
pub const PREVIEW_OF: &str = "platform.celld.dev/preview-of";

/// Value of `app.kubernetes.io/managed-by` on the deploy Jobs the operator runs for a fleet's
/// spec.source (the plugin's carry `kubectl-celld`).
pub const MANAGED_BY_OPERATOR: &str = "celld-operator";

/// Environment variable names the operator sets on celld containers. A fleet's `spec.env` may
/// not use them.
pub const RESERVED_ENV: &[&str] = &[
    "CELLD_BUCKET",
    "S3_ENDPOINT",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_STORAGE_ACCOUNT_NAME",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "CELLD_ADDR",
    "CELLD_INTERNAL_ADDR",
    "CELLD_ADVERTISE",
    "CELLD_NODE",
    "CELLD_WATCH",
    "CELLD_DURABILITY",
    "POD_NAME",
    "POD_NAMESPACE",
    "TMPDIR",
];

/// Keys a credentials Secret holds, under the names celld reads from its environment: for S3 the
/// access key id, the secret key and an optional session token; for GCS a service-account key;
/// for Azure the storage account key.
pub mod secret_keys {
    /// Required: the access key id.
    pub const ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
    /// Required: the secret access key.
    pub const SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";
    /// Optional: a session token for temporary credentials.
    pub const SESSION_TOKEN: &str = "AWS_SESSION_TOKEN";
    /// GCS: the service-account key JSON.
    pub const GOOGLE_SERVICE_ACCOUNT_KEY: &str = "GOOGLE_SERVICE_ACCOUNT_KEY";
    /// Azure: the storage account key.
    pub const AZURE_STORAGE_ACCOUNT_KEY: &str = "AZURE_STORAGE_ACCOUNT_KEY";
}

/// Label on a CelldFleet that no CelldRollout ships to (its value says why, for people: the
/// version it is pinned to, a ticket); the rollouts that select it list it as skipped.
pub const ROLLOUT_PIN: &str = "platform.celld.dev/rollout-pin";

/// Annotation on a CelldRollout holding it paused (its value is the reason), set by `kubectl
/// celld rollout pause`; GitOps tools leave it alone.
pub const ROLLOUT_PAUSED: &str = "platform.celld.dev/rollout-paused";

/// Annotation on a CelldRollout: the highest wave (numbered from 1) that may start without
/// waiting for approval and whose bake may end now, optionally followed by a space and anything
/// (`kubectl celld rollout promote` adds the time, so each promotion is a new value): a value
/// is taken once, for the revision under way.
pub const PROMOTE_WAVE: &str = "platform.celld.dev/promote-wave";

/// Annotation on a CelldRollout stopping its revision for good (its value is the reason), set
/// by `kubectl celld rollout abort`; the fleets moved are rolled back unless spec.onFailure is
/// Halt.
pub const ROLLOUT_ABORT: &str = "platform.celld.dev/rollout-abort";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_selector_string_names_the_fleet_and_the_node_role() {
        assert_eq!(
            node_selector_string("web"),
            "platform.celld.dev/fleet=web,platform.celld.dev/role=node"
        );
    }
}
