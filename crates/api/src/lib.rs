//! The `platform.celld.dev/v1alpha1` API: the [`CelldFleet`] and [`CelldObjectStore`] custom
//! resources, their admission rules, and the storage resolution that the operator and the
//! `kubectl celld` plugin share so that both see a fleet's object storage exactly alike.
//!
//! The folders, top to bottom: [`rollout`] (the CelldRollout type, its fleet selection and
//! waves) and [`preview`] (the CelldPreview type) over [`fleet`] (the
//! CelldFleet type) over [`rules`] (its CEL admission rules) over [`contract`] (the celld
//! runtime's contract: ports, pointer, releases, upgrade rules). Beside them at the root: the
//! [`CelldObjectStore`] type, bucket URLs, condition types ([`conditions`]) and the reasons
//! the operator writes ([`reasons`]), labels, storage resolution and validation.

pub mod bucket;
pub mod conditions;
pub mod contract;
pub mod fleet;
pub mod labels;
pub mod object_store;
pub mod pod_security;
pub mod preview;
pub mod quantity;
pub mod reasons;
pub mod resolve;
pub mod rollout;
pub mod rules;
pub mod schema_bounds;
pub mod storage_env;
pub mod validate;

pub use bucket::{BucketUrl, Scheme};
pub use fleet::{
    Adoption, Autoscaling, AutoscalingStatus, CapacityStatus, CapacityTotals, CelldFleet,
    CelldFleetSpec, CelldFleetStatus, DEFAULT_IMAGE, DeploymentStatus, DriftPolicy, Durability,
    FluxSourceKind, FluxSourceRef, GatewayRef, ImageLayout, ImageSource, IngressSpec, IngressTls,
    LocalStorage, LocalStorageType, NodeCapacity, NodeRestart, NodeStatus, ObjectStorage, PathType,
    PreviewCredentials, PreviewPolicy, PreviewTls, PublishAttempt, PublishPhase, PublishedRevision,
    PvcRetention, ScaleDecision, ScaleDown, ScaleHold, ScaleUp, SecretRef, ServiceSpec,
    ServiceType, SourceDrift, SourceRevision, SourceStatus, StorageStatus, StoreRef,
    UpgradeStrategy, WorkerSource,
};
pub use object_store::{CelldObjectStore, CelldObjectStoreSpec, CelldObjectStoreStatus};
pub use preview::{CelldPreview, CelldPreviewSpec, CelldPreviewStatus, PreviewPhase};
pub use resolve::{ResolveError, ResolvedStorage};
pub use rollout::{CelldRollout, CelldRolloutSpec, CelldRolloutStatus, RolloutSource};
pub use validate::{SpecError, Violation};

/// The API group of every resource in this crate.
pub const GROUP: &str = "platform.celld.dev";
/// The API version of every resource in this crate.
pub const VERSION: &str = "v1alpha1";
