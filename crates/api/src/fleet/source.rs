//! Where a fleet's Worker comes from when its manifest declares it (spec.source): an OCI image
//! or a Flux source, published by the operator, and the record of what it published.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The Worker a fleet serves, declared in its manifest: the operator publishes every new
/// revision of the source to the fleet's bucket prefix with a deploy Job (as `kubectl celld
/// deploy` would) and keeps the bucket on it. Without spec.source the Worker is shipped with
/// `kubectl celld deploy`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.image) != has(self.sourceRef)").message("spec.source needs exactly one of image (an OCI image holding the Worker project) and sourceRef (a Flux source in the fleet's namespace)"))]
pub struct WorkerSource {
    /// An OCI image holding the Worker project. Pin it by digest (name:tag@sha256:...): a plain
    /// tag is published once, as the digest the kubelet pulled, and a tag moved later is not
    /// noticed (change the reference, or set the annotation
    /// platform.celld.dev/reconcile-requested-at, to publish it again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageSource>,

    /// A Flux source (OCIRepository, GitRepository or Bucket) in the fleet's namespace: its
    /// status.artifact is downloaded by the deploy Job and checked against its digest. Needs
    /// Flux's source-controller in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<FluxSourceRef>,

    /// Directory of the Worker project (the one holding wrangler.jsonc or wrangler.json) inside
    /// the source, relative: letters, digits, '.', '_', '-' and '/', no '..'. Default: the
    /// source's root.
    #[serde(default = "default_path")]
    #[schemars(length(min = 1, max = 256))]
    #[x_kube(validation = crate::rules::source::path_rule())]
    pub path: String,

    /// Stop publishing: the bucket keeps the version it has and the SourceSynced condition says
    /// Suspended. For a pause made outside git, set the annotation
    /// platform.celld.dev/source-suspended (its value is the reason), which GitOps tools leave
    /// alone; `kubectl celld rollback` sets it.
    #[serde(default)]
    pub suspend: bool,

    /// What to do when the bucket's deployment pointer names a version other than the one last
    /// published from the source (someone ran `kubectl celld deploy`): Correct (default)
    /// publishes the source again; Report only reports it. Both set SourceSynced=False with
    /// reason Drifted and one Warning Event.
    #[serde(default)]
    pub drift_policy: DriftPolicy,

    /// Failed publishes of one revision (after backoff from 30s up to 10m between them) before
    /// the fleet is reported Stalled; a new revision, a change of spec.source or the annotation
    /// platform.celld.dev/reconcile-requested-at starts counting again. Default 5.
    #[serde(default = "default_retries")]
    #[schemars(range(min = 1, max = 100))]
    pub retries: i32,

    /// Longest time one publish may take (the deploy Job's activeDeadlineSeconds), as a
    /// duration such as 90s, 10m or 1h; from 30s to 24h. Default 10m.
    #[serde(default = "default_timeout")]
    #[schemars(length(min = 2, max = 16))]
    #[x_kube(validation = Rule::new("self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') && self != ''").message("spec.source.timeout must be a duration of hours, minutes and seconds, such as 90s, 10m or 1h30m"))]
    #[x_kube(validation = Rule::new("!self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') || self == '' || (duration(self) >= duration('30s') && duration(self) <= duration('24h'))").message("spec.source.timeout must be from 30s to 24h"))]
    pub timeout: String,

    /// Image of the deploy Job for a sourceRef or an image with layout Volume (celld, esbuild
    /// and curl). Default: this operator release's deployer built on the fleet's celld release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    #[x_kube(validation = crate::rules::source::deployer_image_rule())]
    pub deployer_image: Option<String>,
}

/// An OCI image holding a Worker project.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ImageSource {
    /// Image reference, registry/name:tag, registry/name@sha256:<digest> or both
    /// (name:tag@sha256:<digest>, recommended).
    #[schemars(length(min = 1, max = 512))]
    #[x_kube(validation = Rule::new("self.matches('^[a-z0-9][^\\\\s@]*(@sha256:[a-f0-9]{64})?$') && !self.contains('://')").message("spec.source.image.reference must be an image reference such as registry.example.com/web-worker:1.4.2@sha256:<64 hex digits> (no scheme such as https://)"))]
    pub reference: String,

    /// How the image holds the project: Volume (default) mounts the image read-only at /src in
    /// the deploy pod (an image volume: Kubernetes 1.35 or later, or 1.33 with the
    /// ImageVolume feature gate); Deployer runs the image itself as the deploy container, the
    /// project at /app (the image holds celld, esbuild and curl, like `kubectl celld deploy
    /// --image`).
    #[serde(default)]
    pub layout: ImageLayout,
}

/// How an image holds a Worker project.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum ImageLayout {
    /// The image is mounted as a volume at /src; the deployer image runs the deploy.
    #[default]
    Volume,
    /// The image is the deployer, with the project at /app.
    Deployer,
}

/// A Flux source in the fleet's namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct FluxSourceRef {
    /// Kind of the source (group source.toolkit.fluxcd.io): OCIRepository, GitRepository or
    /// Bucket.
    pub kind: FluxSourceKind,
    /// Name of the source, a DNS subdomain.
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = crate::rules::names::dns_subdomain_rule("spec.source.sourceRef.name", "a Flux source in the same namespace", "web-worker"))]
    pub name: String,
}

/// The Flux source kinds a fleet reads.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FluxSourceKind {
    /// source.toolkit.fluxcd.io OCIRepository.
    OCIRepository,
    /// source.toolkit.fluxcd.io GitRepository.
    GitRepository,
    /// source.toolkit.fluxcd.io Bucket.
    Bucket,
}

impl FluxSourceKind {
    /// The kind as Kubernetes spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OCIRepository => "OCIRepository",
            Self::GitRepository => "GitRepository",
            Self::Bucket => "Bucket",
        }
    }

    /// The resource (plural) name.
    pub fn plural(self) -> &'static str {
        match self {
            Self::OCIRepository => "ocirepositories",
            Self::GitRepository => "gitrepositories",
            Self::Bucket => "buckets",
        }
    }

    /// Every kind.
    pub const ALL: [FluxSourceKind; 3] = [Self::OCIRepository, Self::GitRepository, Self::Bucket];
}

/// What the operator does when the bucket serves a version other than the one it published.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum DriftPolicy {
    /// Publish the source again.
    #[default]
    Correct,
    /// Only report the drift.
    Report,
}

fn default_path() -> String {
    "./".to_string()
}

fn default_retries() -> i32 {
    5
}

fn default_timeout() -> String {
    "10m".to_string()
}

impl WorkerSource {
    /// A source from an image reference, with every default.
    pub fn from_image(reference: impl Into<String>) -> Self {
        Self {
            image: Some(ImageSource {
                reference: reference.into(),
                layout: ImageLayout::default(),
            }),
            source_ref: None,
            path: default_path(),
            suspend: false,
            drift_policy: DriftPolicy::default(),
            retries: default_retries(),
            timeout: default_timeout(),
            deployer_image: None,
        }
    }

    /// spec.source.timeout as a duration; None when it is not of the admitted form.
    pub fn timeout(&self) -> Option<Duration> {
        parse_duration(&self.timeout)
    }
}

/// Parses `1h30m`, `10m`, `90s` (hours, minutes, seconds in that order, each optional, at least
/// one).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = 0u64;
    let mut digits = String::new();
    let mut last_unit = 0u8;
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let (rank, secs) = match c {
            'h' => (1, 3600),
            'm' => (2, 60),
            's' => (3, 1),
            _ => return None,
        };
        if digits.is_empty() || rank <= last_unit {
            return None;
        }
        let n: u64 = digits.parse().ok()?;
        total = total.checked_add(n.checked_mul(secs)?)?;
        digits.clear();
        last_unit = rank;
    }
    (digits.is_empty() && last_unit > 0).then(|| Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_of_hours_minutes_and_seconds() {
        assert_eq!(parse_duration("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        for bad in ["", "10", "m", "5s1m", "1h1h", "1d", "-1m", "1.5h"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
