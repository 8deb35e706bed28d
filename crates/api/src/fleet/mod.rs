//! The `CelldFleet` resource: one celld fleet serving one Worker application from one
//! object-storage bucket prefix.

mod autoscaling;
mod capacity_status;
pub mod prefix_policy;
mod preview_credentials;
mod previews;
mod routing;
mod source;
mod status;
mod storage;
mod upgrade;

use k8s_openapi::api::core::v1::{
    Affinity, EnvVar, LocalObjectReference, ResourceRequirements, Toleration,
    TopologySpreadConstraint,
};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::contract::durability::Durability;
pub use autoscaling::{Autoscaling, ScaleDown, ScaleUp};
pub use capacity_status::{
    AutoscalingStatus, CapacityStatus, CapacityTotals, NodeCapacity, ScaleDecision, ScaleHold,
};
pub use preview_credentials::PreviewCredentials;
pub use previews::{PreviewPolicy, PreviewTls, preview_credentials_rule, previews_bucket_rule};
pub use routing::{GatewayRef, IngressSpec, IngressTls, PathType, ServiceSpec, ServiceType};
pub use source::{
    DriftPolicy, FluxSourceKind, FluxSourceRef, ImageLayout, ImageSource, WorkerSource,
    parse_duration,
};
pub use status::{
    Adoption, CelldFleetStatus, DeploymentStatus, NodeRestart, NodeStatus, PublishAttempt,
    PublishPhase, PublishedRevision, SourceDrift, SourceRevision, SourceStatus, StorageStatus,
};
pub use storage::{
    LocalStorage, LocalStorageType, ObjectStorage, PvcRetention, SecretRef, StoreRef,
};
pub use upgrade::UpgradeStrategy;

/// The celld runtime image a fleet runs unless `spec.image` says otherwise: the newest release
/// whose image digest is known (v0.6.0's multi-architecture OCI index, release commit
/// bad4649), pinned by tag and digest so a moved tag never changes what runs.
pub const DEFAULT_IMAGE: &str = "ghcr.io/denoland/celld:v0.6.0@sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b";

/// Desired state of a celld fleet: the nodes, their object storage, local work storage and how
/// the Worker is reached.
// printcolumn attributes repeat keys by design.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "platform.celld.dev",
    version = "v1alpha1",
    kind = "CelldFleet",
    namespaced,
    status = "CelldFleetStatus",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    shortname = "cf",
    category = "celld",
    doc = "A celld fleet: a StatefulSet of celld nodes serving one Worker application from one object-storage bucket prefix, with its Services and optional Ingress or HTTPRoute.",
    cel,
    validation = Rule::new("self.metadata.name.size() <= 52 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')").message("metadata.name: a CelldFleet name must start with a letter, contain only lowercase letters, digits and '-', and be at most 52 characters (it names the StatefulSet, its pods and Services)"),
    printcolumn(name = "Ready", type_ = "string", json_path = r#".status.conditions[?(@.type=="Ready")].status"#, description = "Whether the fleet serves its Worker"),
    printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas", description = "Desired celld nodes"),
    printcolumn(name = "Available", type_ = "integer", json_path = ".status.readyReplicas", description = "Ready celld nodes"),
    printcolumn(name = "Adopted", type_ = "string", json_path = ".status.deployment.adopted", description = "Nodes serving the deployed Worker version, of all nodes"),
    printcolumn(name = "URL", type_ = "string", json_path = ".status.url", description = "Where the Worker is served"),
    printcolumn(name = "Bucket", type_ = "string", json_path = ".spec.objectStorage.bucket", description = "Object-storage bucket and prefix"),
    printcolumn(name = "Version", type_ = "string", json_path = ".status.deployment.version", description = "Deployed Worker version", priority = 1),
    printcolumn(name = "Synced", type_ = "string", json_path = r#".status.conditions[?(@.type=="SourceSynced")].status"#, description = "Whether the bucket serves the revision spec.source names", priority = 1),
    printcolumn(name = "Source", type_ = "string", json_path = ".status.source.desired.revision", description = "The revision spec.source names", priority = 1),
    printcolumn(name = "Published", type_ = "string", json_path = ".status.source.lastPublished.revision", description = "The revision last published from spec.source", priority = 1),
    printcolumn(name = "Store", type_ = "string", json_path = ".spec.storeRef.name", description = "Shared CelldObjectStore", priority = 1),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[x_kube(validation = Rule::new("!(has(self.storeRef) && has(self.objectStorage.credentialsSecretRef))").message("spec.storeRef excludes spec.objectStorage.credentialsSecretRef: the CelldObjectStore names the credentials Secret, so remove credentialsSecretRef (or remove storeRef for an inline connection)"))]
#[x_kube(validation = Rule::new("!has(self.storeRef) || (!has(self.objectStorage.endpoint) && !has(self.objectStorage.region) && !has(self.objectStorage.allowHTTP) && !has(self.objectStorage.azureStorageAccount))").message("spec.storeRef excludes spec.objectStorage.endpoint, region, allowHTTP and azureStorageAccount: the CelldObjectStore provides the connection, so keep only spec.objectStorage.bucket"))]
#[x_kube(validation = previews::previews_bucket_rule())]
#[x_kube(validation = previews::preview_credentials_rule())]
#[x_kube(validation = Rule::new("!self.objectStorage.bucket.startsWith('az://') || has(self.storeRef) || has(self.objectStorage.azureStorageAccount)").message("an az:// bucket needs spec.objectStorage.azureStorageAccount, the Azure storage account holding its container (or a spec.storeRef whose CelldObjectStore sets azureStorageAccount)"))]
#[schemars(transform = crate::rules::versions::schema)]
#[serde(rename_all = "camelCase")]
pub struct CelldFleetSpec {
    /// Number of celld nodes (StatefulSet replicas). 0 stops the fleet without deleting it.
    /// With spec.autoscaling the operator owns the number of nodes: this is only where the
    /// fleet starts, and later changes to it are ignored (the Autoscaling condition says so).
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0, max = 1000))]
    pub replicas: i32,

    /// celld runtime image the nodes run. The celld version is read from the tag (v0.6.0 or
    /// 0.6.0, also when a digest pins it: v0.6.0@sha256:...); it decides the probes, the
    /// spec.env variables refused at admission, and how a change of version moves
    /// (spec.upgradeStrategy). A version celld forbids (v0.4.0 once v0.4.1 ran) is refused with
    /// the Degraded condition. A digest alone or a tag that is not a version (latest) takes the
    /// safe path: no startup probe, a full stop on change, and Degraded names any variable a
    /// release refuses.
    #[serde(default = "default_image")]
    #[schemars(length(min = 1, max = 512))]
    pub image: String,

    /// How nodes move to a new image: Auto (default) rolls one node at a time where celld allows
    /// it and stops every old node first where it does not or where a version is unknown;
    /// Rolling also rolls unknown versions, never a pair celld forbids rolling; FullStop always
    /// stops the fleet first.
    #[serde(default)]
    pub upgrade_strategy: UpgradeStrategy,

    /// Seconds a rollout (new nodes, a new pod template, a change of celld image) may take
    /// before the operator reports it stuck: Progressing=False with reason
    /// ProgressDeadlineExceeded and a Warning Event naming the nodes that hold it. celld from
    /// v0.5.0 keeps a joining node unready until the fleet settles, with no timeout of its own,
    /// so no probe restarts it; this deadline is how a stuck rollout is found. Default 600.
    #[serde(default = "default_progress_deadline_seconds")]
    #[schemars(range(min = 1, max = 86400))]
    pub progress_deadline_seconds: i32,

    /// When the kubelet pulls the image: Always, IfNotPresent or Never. Defaults to the
    /// Kubernetes default for the image's tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,

    /// A shared CelldObjectStore in the fleet's namespace that provides the object-storage
    /// connection (endpoint, region, Azure storage account, credentials). Excludes the inline
    /// connection fields of objectStorage. Without it, objectStorage is the connection, and
    /// without objectStorage.credentialsSecretRef the nodes use their workload identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_ref: Option<StoreRef>,

    /// The bucket prefix this fleet serves from and, without storeRef, the inline connection.
    pub object_storage: ObjectStorage,

    /// Local work storage of each node (SQLite per cell, snapshots, follower log).
    #[serde(default)]
    pub local_storage: LocalStorage,

    /// The public Service in front of the nodes (port 80 to celld's port 8080).
    #[serde(default)]
    pub service: ServiceSpec,

    /// Public routing: an Ingress (ingressClass) or a Gateway API HTTPRoute (gatewayRefs). Omit
    /// to reach the fleet through its Service only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<Box<IngressSpec>>,

    /// CPU and memory requests and limits of the celld container. celld caps its memory at 80%
    /// of the memory limit. Resources are cpu, memory, ephemeral-storage, hugepages-SIZE or an
    /// extended resource such as nvidia.com/gpu (at most 16 each); quantities are non-negative,
    /// below 2^63, with at most 15 digits before and 3 after the point; a request may not exceed
    /// its limit; claims are not supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::rules::resources::schema)]
    pub resources: Option<Box<ResourceRequirements>>,

    /// When celld acknowledges a write (see [`Durability`]; the schema shows the type's text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<Durability>,

    /// Extra environment variables for the celld container (celld tunables such as
    /// CELLD_MAX_RSS_MB or RUST_LOG), at most 64. Names are unique, start with a letter, '-', '_'
    /// or '.' and contain only letters, digits, '-', '_' and '.'; names the operator sets itself
    /// are refused. A variable has value or valueFrom, not both.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64), transform = crate::rules::env::schema)]
    #[x_kube(validation = crate::rules::env::reserved_env_rule())]
    pub env: Vec<EnvVar>,

    /// Node labels a node must have to run this fleet's pods: at most 64, keys are qualified
    /// names such as kubernetes.io/os, values label values of at most 63 characters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(transform = crate::rules::metadata::label_map_bounds)]
    #[x_kube(validation = crate::rules::metadata::label_keys_rule("spec.nodeSelector"))]
    #[x_kube(validation = crate::rules::metadata::label_values_rule("spec.nodeSelector"))]
    pub node_selector: BTreeMap<String, String>,

    /// Taints this fleet's pods tolerate, at most 32.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32), transform = crate::rules::tolerations::schema)]
    pub tolerations: Vec<Toleration>,

    /// Node and pod affinity of this fleet's pods. Each list holds at most 8 entries (the values
    /// of a node selector requirement 32), each matchLabels map at most 32, and label selector
    /// values are label values of at most 63 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::rules::affinity::schema)]
    pub affinity: Option<Box<Affinity>>,

    /// How this fleet's pods spread across zones and nodes, at most 8 constraints with distinct
    /// topologyKey and whenUnsatisfiable, each with at most 8 selector requirements, values and
    /// matchLabelKeys. Selectors may use the label platform.celld.dev/fleet=<fleet name>.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8), transform = crate::rules::topology_spread::schema)]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,

    /// Extra annotations on the celld pods. Keys under platform.celld.dev/ are the operator's.
    /// At most 64, keys are qualified names such as example.com/owner, and keys and values total
    /// at most 261120 bytes (the 256 KiB Kubernetes allows, less 1 KiB for the operator's own).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(transform = crate::rules::metadata::annotation_map_bounds)]
    #[x_kube(validation = crate::rules::metadata::owned_keys_rule("spec.podAnnotations"))]
    #[x_kube(validation = crate::rules::metadata::annotation_keys_rule("spec.podAnnotations"))]
    #[x_kube(validation = crate::rules::metadata::annotations_size_rule("spec.podAnnotations"))]
    pub pod_annotations: BTreeMap<String, String>,

    /// Extra labels on the celld pods. Keys under platform.celld.dev/ are the operator's. At most
    /// 64, keys are qualified names such as app.kubernetes.io/part-of, values label values of at
    /// most 63 characters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(transform = crate::rules::metadata::label_map_bounds)]
    #[x_kube(validation = crate::rules::metadata::owned_keys_rule("spec.podLabels"))]
    #[x_kube(validation = crate::rules::metadata::label_keys_rule("spec.podLabels"))]
    #[x_kube(validation = crate::rules::metadata::label_values_rule("spec.podLabels"))]
    pub pod_labels: BTreeMap<String, String>,

    /// ServiceAccount the celld pods run as, a DNS subdomain: the one carrying the cloud
    /// identity (IRSA role annotation, GKE or AKS workload identity) when the storage has no
    /// credentials Secret. Its API token is not mounted into the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.serviceAccountName", "a ServiceAccount in the fleet's namespace", "celld"))]
    pub service_account_name: Option<String>,

    /// Secrets holding registry credentials for pulling the image (and a spec.source image).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub image_pull_secrets: Vec<LocalObjectReference>,

    /// The Worker the fleet serves, declared here (an OCI image or a Flux source) and published
    /// by the operator. Omit it to ship the Worker with `kubectl celld deploy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Box<WorkerSource>>,

    /// Size the fleet from celld's own capacity signals instead of spec.replicas (celld v0.5.0
    /// and later): see status.autoscaling and status.capacity for what it decided and read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Autoscaling>,

    /// Let CelldPreviews copy this fleet: each gets a fleet of its own at
    /// <preview>.<baseDomain>, its data under the previews bucket, deleted at its TTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previews: Option<Box<PreviewPolicy>>,
}

/// When the kubelet pulls a container image.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImagePullPolicy {
    /// Pull on every pod start.
    Always,
    /// Pull only when the image is not on the node.
    IfNotPresent,
    /// Never pull; the image must be on the node.
    Never,
}

impl ImagePullPolicy {
    /// The value as Kubernetes spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "Always",
            Self::IfNotPresent => "IfNotPresent",
            Self::Never => "Never",
        }
    }
}

fn default_replicas() -> i32 {
    1
}

fn default_image() -> String {
    DEFAULT_IMAGE.to_string()
}

fn default_progress_deadline_seconds() -> i32 {
    600
}

impl CelldFleetSpec {
    /// When the nodes acknowledge a write: spec.durability, else the default of the work
    /// storage (see [`CelldFleetSpec::durability`]).
    pub fn effective_durability(&self) -> Durability {
        self.durability.unwrap_or(match self.local_storage.type_ {
            LocalStorageType::Ephemeral => Durability::Bucket,
            LocalStorageType::Persistent => Durability::Fleet,
        })
    }

    /// Whether a node's replacement can lose acknowledged writes: `fleet` durability on work
    /// storage that is erased with its pod.
    pub fn durability_at_risk(&self) -> bool {
        self.effective_durability() == Durability::Fleet
            && self.local_storage.type_ == LocalStorageType::Ephemeral
    }

    /// A spec with every default applied and the given bucket; a starting point for builders
    /// and tests.
    pub fn with_bucket(bucket: impl Into<String>) -> Self {
        Self {
            replicas: default_replicas(),
            image: default_image(),
            upgrade_strategy: UpgradeStrategy::default(),
            progress_deadline_seconds: default_progress_deadline_seconds(),
            image_pull_policy: None,
            store_ref: None,
            object_storage: ObjectStorage {
                bucket: bucket.into(),
                ..ObjectStorage::default()
            },
            local_storage: LocalStorage::default(),
            service: ServiceSpec::default(),
            ingress: None,
            resources: None,
            durability: None,
            env: Vec::new(),
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            affinity: None,
            topology_spread_constraints: Vec::new(),
            pod_annotations: BTreeMap::new(),
            pod_labels: BTreeMap::new(),
            service_account_name: None,
            image_pull_secrets: Vec::new(),
            source: None,
            autoscaling: None,
            previews: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_image_is_the_newest_release_whose_digest_is_published() {
        use crate::contract::releases::{RELEASES, display};
        let newest = RELEASES
            .iter()
            .rev()
            .find_map(|r| Some((r.version, r.digest?)))
            .expect("a release with a digest");
        assert_eq!(
            DEFAULT_IMAGE,
            format!("ghcr.io/denoland/celld:{}@{}", display(newest.0), newest.1)
        );
    }

    #[test]
    fn the_default_durability_loses_no_acknowledged_write_on_its_work_storage() {
        let on = |type_, durability| {
            let mut spec = CelldFleetSpec::with_bucket("b");
            spec.local_storage.type_ = type_;
            spec.durability = durability;
            (spec.effective_durability(), spec.durability_at_risk())
        };
        use Durability::{Bucket, Fleet};
        use LocalStorageType::{Ephemeral, Persistent};
        assert_eq!(on(Ephemeral, None), (Bucket, false));
        assert_eq!(on(Persistent, None), (Fleet, false));
        assert_eq!(on(Ephemeral, Some(Bucket)), (Bucket, false));
        assert_eq!(on(Persistent, Some(Bucket)), (Bucket, false));
        assert_eq!(on(Persistent, Some(Fleet)), (Fleet, false));
        assert_eq!(on(Ephemeral, Some(Fleet)), (Fleet, true), "asked for");
    }
}
