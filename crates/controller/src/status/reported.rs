//! What the [writer](crate::status::writer) needs of a kind: its status, and where in that
//! status a failed reconcile is said.

use celld_api::conditions::{self, DEGRADED};
use celld_api::reasons::Reason;
use celld_api::{
    CelldFleet, CelldFleetStatus, CelldObjectStore, CelldObjectStoreStatus, CelldPreview,
    CelldPreviewStatus, CelldRollout, CelldRolloutStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use kube::core::NamespaceResourceScope;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// A kind whose status and Events the operator writes.
pub trait Reported:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
    /// Its status.
    type Status: Clone + Default + PartialEq + Serialize + Debug + Send + Sync + 'static;

    /// The kind's name, for errors and logs.
    const KIND: &'static str;

    /// The status the object carries.
    fn status(&self) -> Option<&Self::Status>;

    /// Where `status` lists its conditions, or None when the kind's reconcile reports every
    /// failure in its status itself.
    fn conditions(status: &mut Self::Status) -> Option<&mut Vec<Condition>>;

    /// Whether the kind's status has a place for a failed reconcile (see [`conditions`]).
    ///
    /// [`conditions`]: Reported::conditions
    fn says_failures() -> bool {
        Self::conditions(&mut Self::Status::default()).is_some()
    }

    /// `previous` saying that a reconcile failed with `reason` and `message` (a Degraded
    /// condition), or None when the kind's reconcile reports every failure in its status
    /// itself.
    fn failed(
        previous: Option<&Self::Status>,
        reason: Reason,
        message: &str,
        generation: Option<i64>,
    ) -> Option<Self::Status> {
        let mut status = previous.cloned().unwrap_or_default();
        let list = Self::conditions(&mut status)?;
        let condition = conditions::make(
            list,
            DEGRADED,
            Some(true),
            reason.as_str(),
            message,
            generation,
            Timestamp::now(),
        );
        list.retain(|c| c.type_ != DEGRADED);
        list.push(condition);
        Some(status)
    }
}

impl Reported for CelldFleet {
    type Status = CelldFleetStatus;
    const KIND: &'static str = "CelldFleet";

    fn status(&self) -> Option<&Self::Status> {
        self.status.as_ref()
    }

    /// None: a fleet's reconcile publishes every failure it meets in the observation it
    /// reports (Degraded and one Warning per failure, from
    /// [`fleet::status`](crate::fleet::status)); what is left (the operator stopping, the
    /// status write itself failing) has no status to go to.
    fn conditions(_: &mut Self::Status) -> Option<&mut Vec<Condition>> {
        None
    }
}

impl Reported for CelldPreview {
    type Status = CelldPreviewStatus;
    const KIND: &'static str = "CelldPreview";

    fn status(&self) -> Option<&Self::Status> {
        self.status.as_ref()
    }

    fn conditions(status: &mut Self::Status) -> Option<&mut Vec<Condition>> {
        Some(&mut status.conditions)
    }
}

impl Reported for CelldObjectStore {
    type Status = CelldObjectStoreStatus;
    const KIND: &'static str = "CelldObjectStore";

    fn status(&self) -> Option<&Self::Status> {
        self.status.as_ref()
    }

    fn conditions(status: &mut Self::Status) -> Option<&mut Vec<Condition>> {
        Some(&mut status.conditions)
    }
}

impl Reported for CelldRollout {
    type Status = CelldRolloutStatus;
    const KIND: &'static str = "CelldRollout";

    fn status(&self) -> Option<&Self::Status> {
        self.status.as_ref()
    }

    fn conditions(status: &mut Self::Status) -> Option<&mut Vec<Condition>> {
        Some(&mut status.conditions)
    }
}
