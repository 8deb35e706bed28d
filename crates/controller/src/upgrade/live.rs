//! The live StatefulSet as far as rollouts read it: the image and environment its template
//! gives the nodes, the state of a change kept in its annotations, and its status.

use celld_api::contract::durability::{DURABILITY, Durability};
use celld_api::contract::version::image_version;
use celld_api::labels;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::EnvVar;
use k8s_openapi::jiff::Timestamp;
use semver::Version;

/// The larger of two versions, either of which may be unknown.
pub fn max(a: Option<Version>, b: Option<Version>) -> Option<Version> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The live StatefulSet as far as rollouts read it.
pub struct Live<'a> {
    /// Its name: the fleet's, and the prefix of its pods' names.
    pub name: &'a str,
    /// The celld container's image.
    pub image: &'a str,
    /// The celld container's environment.
    pub env: &'a [EnvVar],
    /// The replicas it asks for.
    pub replicas: i32,
    /// The rolling update's partition.
    pub partition: i32,
    /// The image a rolling upgrade started from.
    pub rolling_from: Option<&'a str>,
    /// The highest celld version recorded.
    pub highest: Option<Version>,
    /// When a full stop found every old node gone.
    pub stopped_at: Option<Timestamp>,
    /// Its status describes its current spec.
    pub current: bool,
    /// Pods that exist.
    pub pods: i32,
    /// Pods ready.
    pub ready: i32,
    /// Pods on the current template.
    pub updated: i32,
    /// Whether a change of its pod template waits to reach every pod: its update revision is
    /// not its current one.
    pub template_pending: bool,
}

impl<'a> Live<'a> {
    /// What `sts` says, or None when it has no celld container with an image.
    pub fn of(sts: &'a StatefulSet) -> Option<Self> {
        let spec = sts.spec.as_ref()?;
        let celld = spec
            .template
            .spec
            .as_ref()?
            .containers
            .iter()
            .find(|c| c.name == "celld")?;
        let annotation = |key: &str| {
            sts.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .map(String::as_str)
        };
        let status = sts.status.as_ref();
        Some(Self {
            name: sts.metadata.name.as_deref().unwrap_or_default(),
            image: celld.image.as_deref()?,
            env: celld.env.as_deref().unwrap_or_default(),
            replicas: spec.replicas.unwrap_or(1),
            partition: spec
                .update_strategy
                .as_ref()
                .and_then(|u| u.rolling_update.as_ref())
                .and_then(|r| r.partition)
                .unwrap_or(0),
            rolling_from: annotation(labels::ROLLING_FROM),
            highest: annotation(labels::HIGHEST_VERSION).and_then(|v| Version::parse(v).ok()),
            stopped_at: annotation(labels::STOPPED_AT).and_then(|t| t.parse().ok()),
            current: status.and_then(|s| s.observed_generation) == sts.metadata.generation,
            pods: status.map_or(0, |s| s.replicas),
            ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            updated: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            template_pending: status.is_some_and(|s| {
                s.update_revision.is_some() && s.current_revision != s.update_revision
            }),
        })
    }

    /// What its nodes acknowledge a write after (the template's CELLD_DURABILITY).
    pub fn durability(&self) -> Durability {
        Durability::of_env(
            self.env
                .iter()
                .find(|e| e.name == DURABILITY)
                .and_then(|e| e.value.as_deref()),
        )
    }

    /// The highest version these nodes were given.
    pub fn highest(&self) -> Option<Version> {
        let images = [Some(self.image), self.rolling_from];
        images
            .into_iter()
            .flatten()
            .map(image_version)
            .fold(self.highest.clone(), max)
    }

    /// The newest version the nodes run now: the template's image, or the one a roll left.
    pub fn running(&self) -> Option<Version> {
        [Some(self.image), self.rolling_from]
            .into_iter()
            .flatten()
            .map(image_version)
            .fold(None, max)
    }

    /// Whether every pod runs the current template.
    pub fn rolled_out(&self) -> bool {
        self.current && self.updated >= self.pods
    }
}
