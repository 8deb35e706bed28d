//! Observed state of a fleet, written by the operator.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// Observed state of a celld fleet.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CelldFleetStatus {
    /// The metadata.generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// celld node pods that exist: the StatefulSet's status.replicas. The scale subresource
    /// (`kubectl scale`, a HorizontalPodAutoscaler) reads it as the current replica count.
    #[serde(default)]
    pub replicas: i32,

    /// Label selector of exactly this fleet's celld node pods, in the string form
    /// (platform.celld.dev/fleet=NAME,platform.celld.dev/role=node). The scale subresource
    /// reports it, so a HorizontalPodAutoscaler finds the pods whose metrics it reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,

    /// celld nodes that are ready to serve.
    #[serde(default)]
    pub ready_replicas: i32,

    /// celld nodes running the current pod template.
    #[serde(default)]
    pub updated_replicas: i32,

    /// Where the Worker is served: https only when TLS is configured for the route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,

    /// The object storage the nodes use, as resolved from storeRef or the inline fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageStatus>,

    /// The Worker deployment the bucket prefix points at (deploy/current.json), and how many
    /// nodes serve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentStatus>,

    /// Every node of the fleet with the Worker version it serves, as its `GET /state` last
    /// answered (read when the fleet or its deployment changes, every few seconds while a node
    /// adopts a version, and at least every 10 minutes, stretched beyond 3,000 fleets to 5
    /// fleets a second; then the operator's capacity reading of the nodes stands in when it is
    /// younger than two such periods and every node serves the deployed version).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["name".into()]))]
    pub nodes: Vec<NodeStatus>,

    /// What the operator published from spec.source, and from which revision: absent for a
    /// fleet without spec.source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Box<SourceStatus>>,

    /// What the fleet's nodes last reported about their capacity, summed and per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<super::CapacityStatus>,

    /// What spec.autoscaling decided and why: absent without spec.autoscaling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Box<super::AutoscalingStatus>>,

    /// Ready, Progressing, Degraded, StorageResolved, Deployed, Adopted, SourceSynced, RouteReady,
    /// DurabilityAtRisk, SettingsHeld, NodesFencing, Autoscaling and IdleEviction conditions, and kstatus' Reconciling and
    /// Stalled (True only while the fleet converges, or cannot until someone acts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

/// The object storage a fleet resolved to. Never holds credentials.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct StorageStatus {
    /// CelldObjectStore the connection came from; absent for an inline connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// Bucket and prefix, [s3://|gs://|az://]NAME[/PREFIX].
    pub bucket: String,
    /// Endpoint URL; absent for AWS S3, GCS and Azure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Region; S3 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Azure storage account; az:// buckets only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure_storage_account: Option<String>,
    /// Secret the credentials come from (its name only); absent when the nodes use their
    /// workload identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret: Option<String>,
}

/// The deployed Worker, read from the bucket prefix's deploy/current.json.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStatus {
    /// Version id of the deployment (16 hex digits).
    pub version: String,
    /// Worker script name, when the pointer names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_name: Option<String>,
    /// Share of traffic the version receives, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100))]
    pub rollout_percent: Option<i32>,
    /// Nodes serving this version out of the fleet's nodes, as `N/M` (the Adopted condition
    /// says which do not, and why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<String>,
    /// The fleet's platform.celld.dev/deployed-at annotation (set by `kubectl celld deploy` and
    /// `rollback`) when this version was read from the bucket: the plugin waits for the one it
    /// set before it reads what the nodes serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_deployed_at: Option<String>,
}

/// One node of a fleet, and the Worker version it serves.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// The node's pod name.
    pub name: String,
    /// The Worker version the node serves (deployment.version of its state), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Adopted (it serves the deployed version), Adopting (it is switching to it), Refused (it
    /// failed to load it and keeps serving the version it had), Unreadable (its state could not
    /// be read), or NotReady (it is starting or stopping).
    pub adoption: Adoption,
    /// Why, for a node that does not serve the deployed version: celld's refusal, or what
    /// reading its state met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Cells the node was restoring when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restoring: Option<u64>,
    /// The node's celld container's last exit in the last 10 minutes (the kubelet restarted
    /// it), if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_restart: Option<NodeRestart>,
}

/// An exit of a node's celld container.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct NodeRestart {
    /// When it exited.
    pub at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time,
    /// Its exit code (3: it fenced itself, having lost its lease).
    pub exit_code: i32,
}

/// Where a node stands with the deployed Worker version.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub enum Adoption {
    /// It serves the deployed version.
    Adopted,
    /// It serves another version and is switching, or was just told to.
    #[default]
    Adopting,
    /// It failed to load the deployed version (`POST /reload` answered 422) and keeps serving
    /// the version it had.
    Refused,
    /// Its state could not be read: never taken as adopted.
    Unreadable,
    /// It is not ready and does not answer: starting or stopping.
    NotReady,
}

impl Adoption {
    /// The value as the status spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Adopted => "Adopted",
            Self::Adopting => "Adopting",
            Self::Refused => "Refused",
            Self::Unreadable => "Unreadable",
            Self::NotReady => "NotReady",
        }
    }
}

/// The chain from a fleet's declared source to its bucket: the revision the source names, the
/// deploy Job publishing it, and the last revision published (the bucket pointer and what the
/// nodes serve are status.deployment and status.nodes).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SourceStatus {
    /// The revision spec.source names now: the image reference, or the Flux artifact's
    /// revision (such as latest@sha256:...), with its digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired: Option<SourceRevision>,
    /// The last deploy Job the operator started, and how it went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted: Option<PublishAttempt>,
    /// The last revision published to the bucket, with the Worker version celld gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_published: Option<PublishedRevision>,
    /// The bucket's pointer names a version other than the last published one (kept for 10
    /// minutes after a correction, to count corrections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<SourceDrift>,
    /// Revisions published before the last one, newest first (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<PublishedRevision>,
    /// The CelldRollout the source comes from, when the fleet has no spec.source of its own
    /// and a rollout ships to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<String>,
}

/// A revision of a source.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SourceRevision {
    /// The revision: an image reference, or a Flux artifact's revision.
    pub revision: String,
    /// Its content digest (sha256:...), when known: a Flux artifact's digest, an image's
    /// digest from its reference or, for a tag, the one the kubelet pulled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// A deploy Job of the source.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct PublishAttempt {
    /// The revision it publishes.
    pub revision: String,
    /// The Job's name, in the fleet's namespace.
    pub job: String,
    /// Jobs started for this revision so far, this one included.
    pub attempt: i32,
    /// Jobs of this revision that failed.
    #[serde(default)]
    pub failures: i32,
    /// Running, Succeeded or Failed.
    pub phase: PublishPhase,
    /// What the Job reported, or why its pod waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the Job was started (RFC 3339).
    pub started_at: String,
    /// When it ended (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// A hash of what the publish is made from (revision, path, bucket, the
    /// reconcile-requested-at annotation): failures are counted while it stays the same.
    pub key: String,
}

/// Where a deploy Job stands.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub enum PublishPhase {
    /// Created and not ended.
    #[default]
    Running,
    /// celld deploy published the revision.
    Succeeded,
    /// It failed; the message says why.
    Failed,
}

/// A revision published to the bucket.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct PublishedRevision {
    /// The revision.
    pub revision: String,
    /// Its content digest, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The Worker version celld gave it (16 hex digits), as the bucket pointer named it right
    /// after the publish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When it was published (RFC 3339).
    pub published_at: String,
    /// The key of the publish (see lastAttempted.key).
    pub key: String,
}

/// The bucket serves a version the source did not publish.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct SourceDrift {
    /// The version the bucket pointer names (absent when the pointer is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When the drift was first seen (RFC 3339).
    pub since: String,
    /// Times the operator published the source again because of drift, in the 10 minutes
    /// from correctionsSince: the third one stalls the fleet (another writer keeps deploying).
    #[serde(default)]
    pub corrections: i32,
    /// Start of the window corrections counts in (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrections_since: Option<String>,
}
