//! What `status FLEET` shows, and its `-o yaml|json` form: the fleet and its status, its
//! spec.source and what was published from it, the storage as the operator resolves it, the
//! StatefulSet, the node pods, the capacity the nodes report and what spec.autoscaling decided
//! from it, and recent Events.

use celld_api::{
    Autoscaling, AutoscalingStatus, CapacityStatus, DeploymentStatus, DriftPolicy, NodeStatus,
    SourceStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Serialize;

/// Everything `status FLEET` shows; also its `-o yaml|json` form.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetReport {
    /// Fleet name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// When the fleet was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<Time>,
    /// Where the Worker is served, as the operator reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// celld image of the nodes.
    pub image: String,
    /// Desired nodes.
    pub replicas: i32,
    /// Whether the operator has written any status yet.
    pub status_reported: bool,
    /// Where the Worker comes from when spec.source declares it, and what the operator
    /// published from it; absent for a fleet without spec.source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceReport>,
    /// The deployed Worker version, as the operator read it from the bucket.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<DeploymentStatus>,
    /// Storage resolution.
    pub storage: StorageReport,
    /// The StatefulSet's rollout.
    pub rollout: RolloutReport,
    /// The node pods.
    pub pods: Vec<PodReport>,
    /// Every node with the Worker version it serves, as the operator last read it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeStatus>,
    /// The capacity the nodes last reported, summed and per node (the operator's
    /// status.capacity); absent until the operator has read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityStatus>,
    /// spec.autoscaling and what the autoscaler decided; absent for a fleet without
    /// spec.autoscaling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<AutoscalingReport>,
    /// The fleet's conditions.
    pub conditions: Vec<ConditionReport>,
    /// Recent Events of the fleet, its StatefulSet, its pods and deploy Jobs; oldest first.
    pub events: Vec<EventReport>,
    /// Parts that could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// spec.source and status.source of a fleet; also in `-o yaml|json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceReport {
    /// The image reference of an image source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// `KIND/NAME` of a Flux source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<String>,
    /// The Worker project's directory in the source.
    pub path: String,
    /// Correct or Report.
    pub drift_policy: DriftPolicy,
    /// Why publishing from the source is suspended, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspended: Option<SuspendedReport>,
    /// What the operator reported: desired, lastAttempted, lastPublished, drift, history.
    #[serde(flatten)]
    pub observed: SourceStatus,
    /// The SourceSynced condition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synced: Option<ConditionReport>,
}

/// spec.autoscaling and status.autoscaling of a fleet; also in `-o yaml|json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalingReport {
    /// The bounds and behavior asked for: minReplicas, maxReplicas, scaleUp, scaleDown.
    #[serde(flatten)]
    pub spec: Autoscaling,
    /// What the operator reported: desiredReplicas, currentReplicas, lastScaleTime,
    /// scaleUpSignalSince, scaleDownSignalSince, lastDecision, holding; absent until it decided.
    #[serde(flatten)]
    pub observed: Option<AutoscalingStatus>,
    /// The Autoscaling and IdleEviction conditions, as in the fleet's conditions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ConditionReport>,
}

/// A suspension of publishing from the source.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuspendedReport {
    /// `spec` (spec.source.suspend) or `annotation` (platform.celld.dev/source-suspended).
    pub by: &'static str,
    /// The annotation's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Storage resolution; names and locations only, never credentials.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageReport {
    /// The CelldObjectStore the connection comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// Bucket and prefix.
    pub bucket: String,
    /// Endpoint; None for AWS S3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Region (S3 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The Azure storage account (az:// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub azure_storage_account: Option<String>,
    /// The fleet's ServiceAccount (`spec.serviceAccountName`): the workload identity of its
    /// nodes and deploy pods when no credentials Secret is named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_account: Option<String>,
    /// The credentials Secret's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials_secret: Option<String>,
    /// Whether that Secret exists; absent when it was not checked (no permission to get
    /// Secrets, or storage that does not resolve).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_exists: Option<bool>,
    /// Why the storage does not resolve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The StatefulSet's rollout.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutReport {
    /// The StatefulSet's name.
    pub stateful_set: String,
    /// Whether it exists.
    pub found: bool,
    /// Desired replicas of the StatefulSet.
    pub replicas: i32,
    /// Ready replicas.
    pub ready_replicas: i32,
    /// Replicas on the update revision.
    pub updated_replicas: i32,
    /// The revision the current pods run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// The revision being rolled out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// Whether the operator has caught up with the fleet's latest spec.
    pub spec_observed: bool,
    /// A change of celld image under way (rolling, waiting for restores, full stop), as the
    /// operator's Progressing condition says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<String>,
}

/// One node pod.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodReport {
    /// Pod name.
    pub name: String,
    /// Phase, or the waiting reason of a container (CrashLoopBackOff...), or Terminating.
    pub phase: String,
    /// Ready containers / containers.
    pub ready: String,
    /// Container restarts.
    pub restarts: i32,
    /// When the pod was created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<Time>,
    /// Pod IP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// Node it runs on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The celld container's image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// One condition.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionReport {
    /// Type.
    #[serde(rename = "type")]
    pub type_: String,
    /// True, False or Unknown.
    pub status: String,
    /// CamelCase reason.
    pub reason: String,
    /// What it means.
    pub message: String,
    /// When the status last changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

/// One Event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventReport {
    /// Normal or Warning.
    #[serde(rename = "type")]
    pub type_: String,
    /// CamelCase reason.
    pub reason: String,
    /// Kind/name of the object it is about.
    pub object: String,
    /// What happened.
    pub message: String,
    /// How often.
    pub count: i32,
    /// When it last happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<Time>,
}
