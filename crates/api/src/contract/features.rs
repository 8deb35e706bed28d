//! Whether a fleet's nodes can serve what a deployed version's manifest requires, by the
//! release table: a feature their celld version predates, a feature no release serves, and
//! containers (`containers-v1`), which no node the operator runs can serve.

use super::releases::{FEATURE_CONTAINERS, RELEASES, Triple, display, triple};
use semver::Version;

/// A feature a deployed version requires that the fleet's nodes cannot serve, and what to do.
/// Each sentence follows the version it is about ("version … of Worker … requires …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureProblem {
    /// The nodes' celld version is older than the first release serving the feature.
    #[error(
        "requires feature {feature}, which celld serves from {} on, and spec.image runs v{version}: its nodes refuse the version (HTTP 422 on reload) and keep serving the one before; deploy a version that does not require {feature}, or set spec.image to {} or later",
        display(*since),
        display(*since)
    )]
    TooOld {
        /// The feature.
        feature: String,
        /// The first release serving it.
        since: Triple,
        /// The nodes' celld version.
        version: Version,
    },
    /// No release in the table serves the feature.
    #[error(
        "requires feature {feature}, which no celld release up to {} serves: nodes that do not know it refuse the version (HTTP 422 on reload) and keep serving the one before; deploy a version that does not require it",
        display(*newest)
    )]
    Unknown {
        /// The feature.
        feature: String,
        /// The newest release the table holds.
        newest: Triple,
    },
    /// Containers: celld needs a container engine on every node, which the operator's
    /// restricted pods never have.
    #[error(
        "requires feature {FEATURE_CONTAINERS} (the Worker has containers), which needs a container engine (a Docker or Podman socket and a privileged fence container) on every node; the operator's restricted pods have none, so its container classes can never activate: remove `containers` from the Worker and deploy again, or run celld outside this operator"
    )]
    ContainerEngine,
}

impl FeatureProblem {
    /// The feature the problem is about.
    pub fn feature(&self) -> &str {
        match self {
            Self::TooOld { feature, .. } | Self::Unknown { feature, .. } => feature,
            Self::ContainerEngine => FEATURE_CONTAINERS,
        }
    }
}

/// The first release serving `feature`, if any release does.
pub fn first_serving(feature: &str) -> Option<Triple> {
    RELEASES
        .iter()
        .find(|r| r.features.contains(&feature))
        .map(|r| r.version)
}

/// What keeps nodes running celld `version` (None when the image's tag names none) from a
/// deployed version that requires `required`, in the order required. An unknown version is
/// judged only on what no version could serve: a feature no release serves, and containers.
pub fn problems(version: Option<&Version>, required: &[String]) -> Vec<FeatureProblem> {
    let newest = RELEASES.last().map_or((0, 0, 0), |r| r.version);
    let mut found = Vec::new();
    for feature in required {
        match (first_serving(feature), version) {
            (None, _) => found.push(FeatureProblem::Unknown {
                feature: feature.clone(),
                newest,
            }),
            (Some(since), Some(v)) if triple(v) < since => found.push(FeatureProblem::TooOld {
                feature: feature.clone(),
                since,
                version: v.clone(),
            }),
            (Some(_), _) => {}
        }
        if feature == FEATURE_CONTAINERS {
            found.push(FeatureProblem::ContainerEngine);
        }
    }
    found
}

#[cfg(test)]
mod tests;
