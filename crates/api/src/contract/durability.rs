//! How celld acknowledges a write (CELLD_DURABILITY), which the upgrade rules depend on.

use serde::{Deserialize, Serialize};

/// The variable celld reads it from; unset means [`Durability::Fleet`].
pub const DURABILITY: &str = "CELLD_DURABILITY";

/// When celld acknowledges a write (CELLD_DURABILITY): `fleet` (after a follower's fsync) or
/// `bucket` (after the object-storage write). Omitted: `bucket` on Ephemeral work storage,
/// `fleet` (celld's default) on Persistent; `fleet` on Ephemeral is admitted and reported by the
/// DurabilityAtRisk condition (a pod's replacement can lose acknowledged writes).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// After a follower's fsync, before the bucket write (celld's default).
    Fleet,
    /// After the bucket write.
    Bucket,
}

impl Durability {
    /// The value celld reads from CELLD_DURABILITY.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fleet => "fleet",
            Self::Bucket => "bucket",
        }
    }

    /// What a node runs with when CELLD_DURABILITY is `value` (None: unset, celld's default).
    pub fn of_env(value: Option<&str>) -> Self {
        match value {
            Some("bucket") => Self::Bucket,
            _ => Self::Fleet,
        }
    }
}
