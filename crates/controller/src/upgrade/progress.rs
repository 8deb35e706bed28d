//! Where a change of a fleet's celld image stands, for the status and Events.

use k8s_openapi::jiff::Timestamp;

/// Where a change of image stands, for the status and Events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// No change of image is under way.
    Idle,
    /// Nodes move to the new image one at a time.
    Rolling {
        /// The image nodes leave.
        from: String,
        /// The image nodes get.
        to: String,
        /// Nodes on the new image.
        updated: i32,
        /// Nodes in all.
        of: i32,
    },
    /// A change of the pod template (spec.env, resources, credentials...) reaches the nodes one
    /// at a time, as a rolling upgrade does.
    RollingTemplate {
        /// Nodes on the new template.
        updated: i32,
        /// Nodes in all.
        of: i32,
    },
    /// The next node waits until no node restores cells.
    WaitingForRestores {
        /// Why, naming the node.
        why: String,
    },
    /// Every old node stops before the new image starts.
    FullStop {
        /// The image being stopped.
        from: String,
        /// The image that starts next.
        to: String,
        /// Pods of the old image still running.
        left: i32,
        /// When the last old node's lease has expired and the new image starts, once every
        /// old pod is gone.
        starts_at: Option<Timestamp>,
        /// Why the fleet is not rolled.
        why: String,
    },
    /// The nodes leave settings they must not have on the image the fleet goes back to, before
    /// it changes; the sentence says which.
    WaitingForSettings {
        /// Why, naming the setting.
        why: String,
    },
    /// The new image is refused; the sentence says why and what to do.
    Refused(String),
}

impl Progress {
    /// Whether the operator must look again soon: a rollout is under way.
    pub fn under_way(&self) -> bool {
        !matches!(self, Self::Idle | Self::Refused(_))
    }
}
