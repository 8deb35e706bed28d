//! What a rollout ships: a fleet's spec.source without the fields only a single fleet has.

use crate::fleet::{FluxSourceRef, ImageSource};
use crate::rules::durations;
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// The Worker a rollout ships: a fleet's spec.source without the fields that only a single
/// fleet has (suspend: see spec.paused; driftPolicy: a rollout reports drift).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.image) != has(self.sourceRef)").message("spec.source needs exactly one of image (an OCI image holding the Worker project) and sourceRef (a Flux source in the rollout's namespace)"))]
pub struct RolloutSource {
    /// An OCI image holding the Worker project, pinned by digest (name:tag@sha256:...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageSource>,

    /// A Flux source (OCIRepository, GitRepository or Bucket) in the rollout's namespace; each
    /// new artifact starts the rollout again from the first wave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<FluxSourceRef>,

    /// Directory of the Worker project inside the source, relative: letters, digits, '.', '_',
    /// '-' and '/', no '..'. Default: the source's root.
    #[serde(default = "default_path")]
    #[schemars(length(min = 1, max = 256))]
    #[x_kube(validation = crate::rules::source::path_rule())]
    pub path: String,

    /// Failed publishes of the revision to one fleet (after backoff) before that fleet fails
    /// its wave's gate. Default 3.
    #[serde(default = "default_retries")]
    #[schemars(range(min = 1, max = 100))]
    pub retries: i32,

    /// Longest time one publish may take (the deploy Job's activeDeadlineSeconds), from 30s to
    /// 24h. Default 10m.
    #[serde(default = "default_timeout")]
    #[schemars(length(min = 2, max = 16))]
    #[x_kube(validation = durations::rule("spec.source.timeout", "30s", "24h"))]
    pub timeout: String,

    /// Image of the deploy Jobs for a sourceRef or an image with layout Volume. Default: this
    /// operator release's deployer built on each fleet's celld release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    #[x_kube(validation = crate::rules::source::deployer_image_rule())]
    pub deployer_image: Option<String>,
}

impl RolloutSource {
    /// spec.source.timeout as a duration; None when it is not of the admitted form.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        crate::fleet::parse_duration(&self.timeout)
    }

    /// The fleet source a rollout hands each fleet it moves: this one, never suspended, drift
    /// reported (not corrected: a person's `kubectl celld deploy` during a wave fails its gate
    /// rather than being overwritten).
    pub fn for_fleet(&self) -> crate::fleet::WorkerSource {
        let mut source = crate::fleet::WorkerSource::from_image(String::new());
        source.image = self.image.clone();
        source.source_ref = self.source_ref.clone();
        source.path = self.path.clone();
        source.drift_policy = crate::fleet::DriftPolicy::Report;
        source.retries = self.retries;
        source.timeout = self.timeout.clone();
        source.deployer_image = self.deployer_image.clone();
        source
    }
}

fn default_path() -> String {
    "./".to_string()
}

fn default_retries() -> i32 {
    3
}

fn default_timeout() -> String {
    "10m".to_string()
}
