//! How celld acknowledges a write (CELLD_DURABILITY), which the upgrade rules depend on.

use serde::{Deserialize, Serialize};

/// When celld acknowledges a write (CELLD_DURABILITY).
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
}
