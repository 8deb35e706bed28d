//! How the operator moves a fleet's nodes to a new celld image.

use serde::{Deserialize, Serialize};

/// How nodes move to a new image (spec.upgradeStrategy).
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum UpgradeStrategy {
    /// Follow celld's upgrade rules: roll one node at a time where celld allows it, waiting
    /// until no node restores cells before the next; stop every old node first where it does not
    /// (v0.3 to v0.4 for example), and when the old or the new version is unknown (a digest or a
    /// tag that is not a version).
    #[default]
    Auto,
    /// Roll one node at a time, waiting for restores between nodes, also when the old or the
    /// new version is unknown; a pair celld says must not run side by side (v0.4.1 to v0.5.0
    /// for example) still stops every old node first.
    Rolling,
    /// Always stop every old node before starting the new image: a short outage, never two
    /// versions side by side.
    FullStop,
}
