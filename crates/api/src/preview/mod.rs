//! The `CelldPreview` resource: a short-lived copy of a fleet (one pull request's Worker, for
//! example) at its own host, with its data under its own bucket prefix, deleted at its TTL.

pub mod admission;

use crate::fleet::WorkerSource;
use crate::rules::ttl;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// A preview of a fleet that opts in with spec.previews: the operator creates a CelldFleet of
/// the same name, a copy of the fleet's spec with the previews' host, size and a bucket prefix
/// of its own, reports its URL and version, and at the TTL deletes that fleet and its bucket
/// prefix; the preview stays, Expired.
// printcolumn attributes repeat keys by design.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "platform.celld.dev",
    version = "v1alpha1",
    kind = "CelldPreview",
    namespaced,
    status = "CelldPreviewStatus",
    shortname = "cpv",
    category = "celld",
    doc = "A short-lived preview of a CelldFleet (one pull request's Worker, for example): a fleet of its own at <name>.<baseDomain> with its data under its own bucket prefix, deleted with that data at its TTL.",
    cel,
    validation = Rule::new("self.metadata.name.size() <= 52 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')").message("metadata.name: a CelldPreview name becomes its host (<name>.<baseDomain>) and its fleet's name: start with a letter, use only lowercase letters, digits and '-', end with a letter or digit, at most 52 characters (for example pr-123)"),
    printcolumn(name = "Fleet", type_ = "string", json_path = ".spec.fleet", description = "The fleet previewed"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase", description = "Pending, Ready, Expiring, Expired or Failed"),
    printcolumn(name = "URL", type_ = "string", json_path = ".status.url", description = "Where the preview is served"),
    printcolumn(name = "Version", type_ = "string", json_path = ".status.version", description = "The Worker version the preview serves"),
    printcolumn(name = "Expires", type_ = "date", json_path = ".status.expiresAt", description = "When the preview is deleted"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct CelldPreviewSpec {
    /// The CelldFleet in this namespace the preview copies; its spec.previews must be set. Cannot
    /// change.
    #[schemars(length(min = 1, max = 52))]
    #[x_kube(validation = crate::rules::names::dns_label_rule("spec.fleet", "a CelldFleet in the preview's namespace", "web"))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("spec.fleet cannot change: delete the preview and create one for the other fleet"))]
    pub fleet: String,

    /// How long the preview lives from its creation (default: the fleet's spec.previews.ttl), a
    /// duration in hours, minutes and seconds such as 72h or 1h30m, at most the fleet's
    /// spec.previews.maxTtl. Raising it before the preview expires moves the expiry; an expired
    /// preview stays expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 32))]
    #[x_kube(validation = ttl::rule("spec.ttl"))]
    pub ttl: Option<String>,

    /// The Worker the operator publishes to the preview, as a CelldFleet's spec.source (an
    /// image holding the project, or a Flux source). Without it the preview serves what
    /// `kubectl celld preview create` or `kubectl celld deploy --fleet <preview>` deploys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<WorkerSource>,
}

/// Where a preview is in its life.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default,
)]
pub enum PreviewPhase {
    /// Its fleet is being created or has no ready node serving a version yet.
    #[default]
    Pending,
    /// Its fleet serves a version at the URL.
    Ready,
    /// The TTL passed: its fleet and bucket prefix are being deleted.
    Expiring,
    /// The TTL passed and its fleet and data are gone; the preview stays as a record.
    Expired,
    /// It cannot be served as it is (its fleet does not allow previews, its TTL is too long,
    /// its name is taken): the Ready condition says why and what to do.
    Failed,
}

impl PreviewPhase {
    /// The phase as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Ready => "Ready",
            Self::Expiring => "Expiring",
            Self::Expired => "Expired",
            Self::Failed => "Failed",
        }
    }
}

/// Observed state of a CelldPreview.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CelldPreviewStatus {
    /// The metadata.generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,

    /// Where the preview is in its life.
    #[serde(default)]
    pub phase: PreviewPhase,

    /// Where the preview is served: http(s)://<name>.<baseDomain>/.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,

    /// The CelldFleet serving the preview (the preview's own name), while it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<String>,

    /// The bucket URL holding the preview's data: <previews bucket>/<namespace>/<name>.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<String>,

    /// The bucket URL the operator claimed for the preview before making its fleet: it wrote a
    /// marker holding the preview's UID there (.celld-preview). At the preview's end the
    /// operator empties this prefix, not what the specs say then, and only while the marker
    /// holds this preview's UID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_bucket: Option<String>,

    /// The Worker version the preview's nodes serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,

    /// When the TTL ends: creation time plus spec.ttl (or the fleet's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Time>,

    /// When the preview expired (its fleet deleted); set once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_at: Option<Time>,

    /// Ready (its fleet serves a version at the URL) and DataRemoved (after expiry or on
    /// deletion: whether the bucket prefix was emptied), with reasons; Degraded while its last
    /// reconcile failed (the reason and what failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}
