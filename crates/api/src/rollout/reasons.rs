//! The reasons a CelldRollout's conditions, Events and fleets carry, one typed list so the
//! operator writes them and the plugin reads them alike.

use std::fmt;

/// A CamelCase reason on a CelldRollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RolloutReason {
    /// A new revision began (the first, or one superseding another).
    Started,
    /// A new revision superseded the one under way.
    Superseded,
    /// spec.source names no revision that can be shipped yet.
    SourceNotReady,
    /// A wave started.
    WaveStarted,
    /// A wave's fleets all serve the revision; its bake runs.
    Baking,
    /// A wave passed its gates.
    WavePassed,
    /// A wave failed a gate.
    WaveFailed,
    /// Every wave passed.
    Succeeded,
    /// Held by spec.paused or the pause annotation.
    Paused,
    /// The next wave waits for a promotion.
    WaitingForPromotion,
    /// A gate failed: no further wave.
    Halted,
    /// The fleets moved were pointed back at their versions.
    RolledBack,
    /// Stopped by hand.
    Aborted,
    /// A fleet's publish of the revision failed for good.
    PublishFailed,
    /// A node of a fleet refused the version.
    VersionRefused,
    /// A fleet became Degraded for a reason it did not have when its wave started.
    NewDegradedReason,
    /// A fleet's nodes fenced themselves or restarted.
    NodeRestarted,
    /// A fleet no longer serves the revision, or is not Ready.
    NotServing,
    /// A fleet did not serve the revision within spec.gates.progressDeadline.
    ProgressDeadlineExceeded,
    /// A webhook did not pass the wave.
    WebhookRejected,
    /// The fleet was deleted.
    FleetDeleted,
    /// The fleet is no longer selected (labels, its own spec.source, the pin label).
    Unselected,
    /// A fleet's pointer was set back to its version.
    PointedBack,
    /// A fleet's pointer could not be set back (it had no version, or another writer moved it).
    RollbackSkipped,
    /// Setting a fleet's pointer back failed; it is tried again.
    RollbackFailed,
}

impl RolloutReason {
    /// The reason as conditions and Events spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "Started",
            Self::Superseded => "Superseded",
            Self::SourceNotReady => "SourceNotReady",
            Self::WaveStarted => "WaveStarted",
            Self::Baking => "Baking",
            Self::WavePassed => "WavePassed",
            Self::WaveFailed => "WaveFailed",
            Self::Succeeded => "Succeeded",
            Self::Paused => "Paused",
            Self::WaitingForPromotion => "WaitingForPromotion",
            Self::Halted => "Halted",
            Self::RolledBack => "RolledBack",
            Self::Aborted => "Aborted",
            Self::PublishFailed => "PublishFailed",
            Self::VersionRefused => "VersionRefused",
            Self::NewDegradedReason => "NewDegradedReason",
            Self::NodeRestarted => "NodeRestarted",
            Self::NotServing => "NotServing",
            Self::ProgressDeadlineExceeded => "ProgressDeadlineExceeded",
            Self::WebhookRejected => "WebhookRejected",
            Self::FleetDeleted => "FleetDeleted",
            Self::Unselected => "Unselected",
            Self::PointedBack => "PointedBack",
            Self::RollbackSkipped => "RollbackSkipped",
            Self::RollbackFailed => "RollbackFailed",
        }
    }
}

impl fmt::Display for RolloutReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
