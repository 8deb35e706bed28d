//! Every reason the operator writes on a fleet, a preview or a store: condition reasons and
//! Event reasons, one typed list so the operator's status, Events and metrics and the plugin's
//! reading of them spell them the same way.

use crate::ResolveError;
use std::fmt;

/// A CamelCase reason of a condition or an Event on a CelldFleet or a CelldPreview.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    // StorageResolved
    /// The storage and its credentials Secret resolve.
    Resolved,
    /// spec.storeRef names a store that does not exist.
    StoreNotFound,
    /// spec.storeRef names a store that does not match the schema.
    InvalidStore,
    /// The connection does not fit the bucket's object store.
    ConnectionMismatch,
    /// The S3 endpoint is not a URL the object-store clients accept.
    InvalidEndpoint,
    /// The bucket is not [s3://|gs://|az://]NAME[/PREFIX].
    InvalidBucket,
    /// The credentials Secret does not exist.
    SecretNotFound,
    /// The credentials Secret lacks a key.
    SecretKeyMissing,
    /// The bucket prefix overlaps the prefix of a fleet created before (any namespace).
    PrefixClaimed,
    /// The API server refused a read the operator needs (for example RBAC).
    ApiError,

    // Deployed
    /// A Worker is deployed.
    Deployed,
    /// The bucket holds no deployment pointer.
    NoDeployment,
    /// The deployment pointer could not be read.
    BucketUnreadable,
    /// The fleet names no credentials Secret and the operator's own identity gives none for
    /// its bucket (also Degraded's reason then).
    NoOperatorCredentials,
    /// The bucket cannot be read until the storage resolves (also Ready's reason then).
    StorageUnresolved,

    // Adopted
    /// Every ready node serves the deployed version.
    Adopted,
    /// Some nodes still switch to the deployed version.
    Adopting,
    /// Some nodes refused the deployed version (their reload answered HTTP 422).
    VersionRefused,
    /// Some node's state could not be read, so its version is not known.
    NodeStateUnreadable,
    // RouteReady
    /// spec.ingress is not set.
    NoRouteRequested,
    /// The Ingress is applied.
    IngressApplied,
    /// The HTTPRoute is applied.
    #[allow(clippy::upper_case_acronyms)]
    HTTPRouteApplied,
    /// gatewayRefs is set but the cluster does not serve HTTPRoute.
    GatewayAPIMissing,

    // Progressing
    /// Nodes are rolling out.
    RollingOut,
    /// Every node is ready and up to date.
    Stable,
    /// Nodes move to a new celld version one at a time.
    RollingUpgrade,
    /// The next node waits until no node restores cells.
    WaitingForRestores,
    /// Going back below a release waits until no node has a setting that release holds.
    WaitingForSettings,
    /// Every old node stops before the new celld version starts.
    FullStop,
    /// A rollout did not finish within spec.progressDeadlineSeconds (Progressing=False).
    ProgressDeadlineExceeded,

    // Degraded, and Ready when a child fails
    /// Nothing keeps the fleet from its spec.
    AsExpected,
    /// The API server refused a child (a 4xx answer, or a patch it cannot merge).
    ChildRejected,
    /// The API server could not be reached or answered with a server error or a timeout.
    ApiUnavailable,
    /// spec.image names a celld version that may not start (a forbidden downgrade).
    UpgradeRefused,
    /// spec.env sets a variable the celld version of spec.image refuses at startup (or, when
    /// that version is unknown, that a release refuses).
    EnvRefused,
    /// The deployed version's manifest requires a feature the nodes cannot serve: one their
    /// celld version predates, one no release serves, or containers.
    FeatureUnsupported,
    /// The deployed version's manifest could not be read, or is not a manifest.
    ManifestUnreadable,

    // Ready
    /// spec.replicas is 0.
    ScaledToZero,
    /// The route is not ready.
    RouteNotReady,
    /// Some nodes are not ready yet.
    NodesNotReady,
    /// Every node is ready.
    Serving,

    // Events only
    /// Children were created or changed.
    Applied,
    /// Children the spec no longer asks for were deleted.
    Pruned,
    /// The bucket points at a new Worker version.
    WorkerVersionChanged,
    // SourceSynced
    /// The bucket serves the revision spec.source names.
    Synced,
    /// A deploy Job publishes the revision spec.source names.
    Publishing,
    /// Publishing the revision failed as often as spec.source.retries allows.
    PublishFailed,
    /// The bucket serves a version the source did not publish.
    Drifted,
    /// Publishing from spec.source is suspended.
    Suspended,
    /// The Flux source has no artifact ready.
    SourceNotReady,
    /// The Flux source does not exist, or the cluster does not serve its kind.
    SourceNotFound,
    /// Another writer keeps changing the bucket's pointer while the operator corrects it.
    ConcurrentWriter,
    /// Every node runs the new celld image.
    UpgradeFinished,

    // Autoscaling and IdleEviction (conditions, status.autoscaling, Events, the decisions metric)
    /// The autoscaler runs the nodes it wants.
    Steady,
    /// The autoscaler changed the node count; the nodes follow.
    Scaling,
    /// Event: spec.autoscaling added nodes.
    ScaledUp,
    /// Event: spec.autoscaling removed a node.
    ScaledDown,
    /// Something else sets spec.replicas through the scale subresource.
    ReplicasContested,
    /// A node reports activations waiting for capacity.
    CapacityWaiting,
    /// A node's lease says pressured.
    Pressured,
    /// Every survivor would hold a removed node's cells.
    Headroom,
    /// The node count was below spec.autoscaling.minReplicas.
    BelowMinimum,
    /// The node count was above spec.autoscaling.maxReplicas.
    AboveMaximum,
    /// A signal holds, but not yet for its whole window or period.
    Stabilizing,
    /// Nodes ask for more, and the fleet runs maxReplicas.
    AtMaximum,
    /// The fleet runs minReplicas (or one node).
    AtMinimum,
    /// A node restores cells.
    Restoring,
    /// The StatefulSet rolls out (nodes starting, a new pod template).
    RolloutInProgress,
    /// A change of celld image is under way.
    UpgradeInProgress,
    /// Nodes adopt a Worker version.
    AdoptionInProgress,
    /// spec.source is being published.
    PublishInProgress,
    /// A node lacks memory headroom, or the survivors would lack memory.
    NoHeadroom,
    /// A node's state could not be read.
    StateUnreadable,
    /// The last reading is too old to act on.
    StateStale,
    /// The nodes' celld reports no capacity signals (before v0.5.0).
    SignalsUnsupported,
    /// spec.resources sets no memory: nothing says what survivors can hold.
    NoMemoryBudget,
    /// spec.env sets CELLD_IDLE_EVICT_S.
    IdleEvictionSet,
    /// spec.env does not set CELLD_IDLE_EVICT_S.
    IdleEvictionUnset,

    // CelldFleet: NodesFencing
    /// Nodes fenced themselves (exit code 3) more than once lately.
    RepeatedFences,

    // CelldFleet: SettingsHeld
    /// A setting waits for the nodes moving to the release that allows it.
    HeldForNodes,
    /// A setting waits for spec.image to name a release that allows it.
    HeldForImage,
    /// Every setting of spec.env reaches the nodes.
    SettingsInUse,

    // CelldFleet: DurabilityAtRisk
    /// `fleet` durability on Ephemeral work storage: a pod's replacement can erase a follower's
    /// copy of a write acknowledged before the bucket had it.
    FleetDurabilityOnEphemeral,
    /// `bucket` durability: a write is acknowledged once the bucket has it.
    BucketDurability,
    /// `fleet` durability on Persistent work storage: a follower's disk outlives its pod.
    PersistentWorkStorage,

    // CelldPreview: Ready and DataRemoved
    /// The preview's spec.fleet names no CelldFleet.
    FleetNotFound,
    /// The preview's fleet does not set spec.previews.
    PreviewsNotAllowed,
    /// The preview asks for a longer TTL than its fleet's spec.previews.maxTtl.
    TtlTooLong,
    /// The preview's fleet gives its previews neither credentials of their own nor
    /// spec.previews.shareCredentials.
    CredentialsShared,
    /// The preview's spec.source chooses its deploy image, which its fleet does not allow.
    DeployerNotAllowed,
    /// The preview's bucket prefix is claimed by another preview, or could not be claimed.
    PrefixTaken,
    /// An object of the name exists and is not the owner's: a fleet of the preview's name that
    /// is not the preview's, or an object of a child's name the fleet does not control (the
    /// fleet's Degraded and Ready); the operator leaves it alone.
    NameTaken,
    /// The preview's fleet is created or not serving yet.
    FleetNotReady,
    /// The preview's TTL ended: its fleet and data are being deleted.
    Expiring,
    /// The preview's TTL ended and its fleet and data are gone.
    Expired,
    /// The preview's bucket prefix was emptied.
    DataRemoved,
    /// The preview's bucket prefix could not be emptied (yet).
    DataNotRemoved,
    /// The preview was deleted but its bucket prefix could not be emptied: the data is kept.
    DataKept,
}

impl Reason {
    /// The reason as Kubernetes shows it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Resolved => "Resolved",
            Self::StoreNotFound => "StoreNotFound",
            Self::InvalidStore => "InvalidStore",
            Self::ConnectionMismatch => "ConnectionMismatch",
            Self::InvalidEndpoint => "InvalidEndpoint",
            Self::InvalidBucket => "InvalidBucket",
            Self::SecretNotFound => "SecretNotFound",
            Self::SecretKeyMissing => "SecretKeyMissing",
            Self::PrefixClaimed => "PrefixClaimed",
            Self::ApiError => "ApiError",
            Self::Deployed => "Deployed",
            Self::NoDeployment => "NoDeployment",
            Self::BucketUnreadable => "BucketUnreadable",
            Self::NoOperatorCredentials => "NoOperatorCredentials",
            Self::StorageUnresolved => "StorageUnresolved",
            Self::Adopted => "Adopted",
            Self::Adopting => "Adopting",
            Self::VersionRefused => "VersionRefused",
            Self::NodeStateUnreadable => "NodeStateUnreadable",
            Self::NoRouteRequested => "NoRouteRequested",
            Self::IngressApplied => "IngressApplied",
            Self::HTTPRouteApplied => "HTTPRouteApplied",
            Self::GatewayAPIMissing => "GatewayAPIMissing",
            Self::RollingOut => "RollingOut",
            Self::Stable => "Stable",
            Self::RollingUpgrade => "RollingUpgrade",
            Self::WaitingForRestores => "WaitingForRestores",
            Self::WaitingForSettings => "WaitingForSettings",
            Self::FullStop => "FullStop",
            Self::ProgressDeadlineExceeded => "ProgressDeadlineExceeded",
            Self::AsExpected => "AsExpected",
            Self::ChildRejected => "ChildRejected",
            Self::ApiUnavailable => "ApiUnavailable",
            Self::UpgradeRefused => "UpgradeRefused",
            Self::EnvRefused => "EnvRefused",
            Self::FeatureUnsupported => "FeatureUnsupported",
            Self::ManifestUnreadable => "ManifestUnreadable",
            Self::ScaledToZero => "ScaledToZero",
            Self::RouteNotReady => "RouteNotReady",
            Self::NodesNotReady => "NodesNotReady",
            Self::Serving => "Serving",
            Self::Applied => "Applied",
            Self::Pruned => "Pruned",
            Self::WorkerVersionChanged => "WorkerVersionChanged",
            Self::Synced => "Synced",
            Self::Publishing => "Publishing",
            Self::PublishFailed => "PublishFailed",
            Self::Drifted => "Drifted",
            Self::Suspended => "Suspended",
            Self::SourceNotReady => "SourceNotReady",
            Self::SourceNotFound => "SourceNotFound",
            Self::ConcurrentWriter => "ConcurrentWriter",
            Self::UpgradeFinished => "UpgradeFinished",
            Self::Steady => "Steady",
            Self::Scaling => "Scaling",
            Self::ScaledUp => "ScaledUp",
            Self::ScaledDown => "ScaledDown",
            Self::ReplicasContested => "ReplicasContested",
            Self::CapacityWaiting => "CapacityWaiting",
            Self::Pressured => "Pressured",
            Self::Headroom => "Headroom",
            Self::BelowMinimum => "BelowMinimum",
            Self::AboveMaximum => "AboveMaximum",
            Self::Stabilizing => "Stabilizing",
            Self::AtMaximum => "AtMaximum",
            Self::AtMinimum => "AtMinimum",
            Self::Restoring => "Restoring",
            Self::RolloutInProgress => "RolloutInProgress",
            Self::UpgradeInProgress => "UpgradeInProgress",
            Self::AdoptionInProgress => "AdoptionInProgress",
            Self::PublishInProgress => "PublishInProgress",
            Self::NoHeadroom => "NoHeadroom",
            Self::StateUnreadable => "StateUnreadable",
            Self::StateStale => "StateStale",
            Self::SignalsUnsupported => "SignalsUnsupported",
            Self::NoMemoryBudget => "NoMemoryBudget",
            Self::IdleEvictionSet => "IdleEvictionSet",
            Self::IdleEvictionUnset => "IdleEvictionUnset",
            Self::RepeatedFences => "RepeatedFences",
            Self::HeldForNodes => "HeldForNodes",
            Self::HeldForImage => "HeldForImage",
            Self::SettingsInUse => "SettingsInUse",
            Self::FleetDurabilityOnEphemeral => "FleetDurabilityOnEphemeral",
            Self::BucketDurability => "BucketDurability",
            Self::PersistentWorkStorage => "PersistentWorkStorage",
            Self::FleetNotFound => "FleetNotFound",
            Self::PreviewsNotAllowed => "PreviewsNotAllowed",
            Self::TtlTooLong => "TtlTooLong",
            Self::CredentialsShared => "CredentialsShared",
            Self::DeployerNotAllowed => "DeployerNotAllowed",
            Self::PrefixTaken => "PrefixTaken",
            Self::NameTaken => "NameTaken",
            Self::FleetNotReady => "FleetNotReady",
            Self::Expiring => "Expiring",
            Self::Expired => "Expired",
            Self::DataRemoved => "DataRemoved",
            Self::DataNotRemoved => "DataNotRemoved",
            Self::DataKept => "DataKept",
        }
    }

    /// Why the storage did not resolve. A failed read of the store or Secret is
    /// [`Reason::ApiUnavailable`] when retrying may help, [`Reason::ApiError`] otherwise.
    pub fn of_resolve(error: &ResolveError) -> Self {
        match error {
            ResolveError::StoreNotFound { .. } => Self::StoreNotFound,
            ResolveError::StoreInvalid { .. } => Self::InvalidStore,
            ResolveError::Mismatch { .. } => Self::ConnectionMismatch,
            ResolveError::Endpoint { .. } => Self::InvalidEndpoint,
            ResolveError::Bucket(_) => Self::InvalidBucket,
            ResolveError::SecretNotFound { .. } => Self::SecretNotFound,
            ResolveError::SecretKeyMissing { .. } => Self::SecretKeyMissing,
            ResolveError::PrefixClaimed { .. } => Self::PrefixClaimed,
            ResolveError::Api { source, .. } if transient(source) => Self::ApiUnavailable,
            ResolveError::Api { .. } => Self::ApiError,
        }
    }
}

/// Whether retrying the call that failed with `error` may succeed without anyone changing
/// anything: the API server was unreachable, overloaded, timed out or answered with a server
/// error. A server error about a patch it cannot merge (duplicate list keys) is a refusal.
pub fn transient(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => match status.code {
            408 | 429 => true,
            500..=599 => !status
                .message
                .contains("failed to create typed patch object"),
            _ => false,
        },
        _ => true,
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_reasons_match_the_api_crate() {
        let errors = [
            ResolveError::StoreNotFound {
                name: "s".into(),
                namespace: "ns".into(),
            },
            ResolveError::StoreInvalid {
                name: "s".into(),
                error: "missing field `spec`".into(),
            },
            ResolveError::Mismatch {
                via: "spec.objectStorage".into(),
                bucket: "az://c/p".into(),
                problem: "no account".into(),
            },
            ResolveError::SecretNotFound {
                name: "s".into(),
                namespace: "ns".into(),
                needs: "key GOOGLE_SERVICE_ACCOUNT_KEY".into(),
            },
            ResolveError::SecretKeyMissing {
                name: "s".into(),
                missing: "key AWS_ACCESS_KEY_ID".into(),
            },
            ResolveError::PrefixClaimed {
                bucket: "s3://b/web".into(),
                example: "s3://b/apps/web".into(),
            },
        ];
        for e in &errors {
            assert_eq!(Reason::of_resolve(e).as_str(), e.reason());
        }
    }

    #[test]
    fn a_refused_read_is_not_transient() {
        let refused = ResolveError::Api {
            what: "Secret 'creds'".into(),
            source: Box::new(kube::Error::Api(Box::new(
                kube::core::Status::failure("secrets \"creds\" is forbidden", "Forbidden")
                    .with_code(403),
            ))),
        };
        assert_eq!(Reason::of_resolve(&refused), Reason::ApiError);
        let down = ResolveError::Api {
            what: "Secret 'creds'".into(),
            source: Box::new(kube::Error::Api(Box::new(
                kube::core::Status::failure("etcdserver: request timed out", "InternalError")
                    .with_code(500),
            ))),
        };
        assert_eq!(Reason::of_resolve(&down), Reason::ApiUnavailable);
    }
}
