//! The celld runtime contract the operator, the plugin and the tests share: its listeners, its
//! health path, and where and how a deployment is published in the bucket (the same from v0.4.0
//! through v0.6.x), and, per release, what changed ([`releases`]): the environment it refuses
//! ([`env`]), its readiness gate and shutdown bound, the upgrade rules ([`upgrades`]) and the
//! features a version's manifest ([`manifest`]) may require that the nodes cannot serve
//! ([`features`]), how long a stopped node's lease lives ([`lease`]), the settings
//! held until every node runs the release that brings them ([`held`]) and the Python Workers
//! 0.6.1 holds the same way ([`python_workers`]), with the version read from the image tag ([`version`]); and the node API on
//! each node's internal listener ([`node_api`]), the celld each fleet is deployed with
//! ([`deployer`]) and the script a deploy Job runs, with the result it leaves in the container's
//! termination message ([`publish`]), and when a failed `celld deploy` runs again
//! ([`deploy_retry`]). One other place spells part of it: the
//! testkit's deploy double writes the pointer layout on its own, on purpose, since it stands in
//! for celld and the tests that deploy through it must check this contract against an
//! independent copy.

pub mod deploy_retry;
pub mod deployer;
pub mod durability;
pub mod env;
pub mod features;
pub mod held;
pub mod lease;
pub mod manifest;
pub mod node_api;
pub mod publish;
pub mod python_workers;
pub mod releases;
pub mod upgrades;
pub mod version;

use serde::{Deserialize, Serialize};

/// Port of celld's public listener, which serves the Worker.
pub const HTTP_PORT: i32 = 8080;
/// Port of celld's internal listener: peer traffic and the unauthenticated node API (`/reload`).
pub const INTERNAL_PORT: i32 = 8081;
/// Port of a fleet's public Service, in front of [`HTTP_PORT`].
pub const SERVICE_PORT: i32 = 80;
/// celld's health path on the public listener: 200 while serving, 503 while draining. A
/// readiness and startup signal, never a liveness one.
pub const HEALTH_PATH: &str = "/.well-known/celld/health";

/// Key of the fleet pointer under the bucket prefix: the deployment every node serves, written
/// last by `celld deploy` with compare-and-swap.
pub const FLEET_POINTER: &str = "deploy/current.json";

/// The most the operator reads of a pointer: a few hundred bytes of JSON in practice, so a
/// bigger object is not a celld pointer (and must not fill the memory every tenant shares).
pub const POINTER_MAX_BYTES: u64 = 64 * 1024;

/// The most the operator reads of a version's manifest: its module list, each with a digest.
pub const MANIFEST_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Key of the named pointer of the Worker `script` under the bucket prefix, written before the
/// fleet pointer.
pub fn script_pointer(script: &str) -> String {
    format!("deploy/{script}/current.json")
}

/// Rollout of a deployment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollout {
    /// Percentage of requests served by this version.
    pub percent: Option<i32>,
}

/// The JSON of a pointer (fleet or named): which version of which Worker is deployed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeployPointer {
    /// The Worker's name; celld may leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_name: Option<String>,
    /// The version: 16 hex digits.
    pub version: String,
    /// Where the version's modules are, relative to the bucket prefix
    /// (`deploy/<script>/<version>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// The rollout, when celld wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<Rollout>,
}

impl DeployPointer {
    /// Parses a pointer as celld writes it.
    pub fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(body)
    }

    /// The pointer `celld deploy` writes for `version` of `script`, all traffic on it.
    pub fn to(script: &str, version: &str) -> Self {
        Self {
            script_name: Some(script.to_string()),
            version: version.to_string(),
            prefix: Some(format!("deploy/{script}/{version}")),
            rollout: Some(Rollout { percent: Some(100) }),
        }
    }

    /// The pointer as JSON.
    pub fn body(&self) -> Vec<u8> {
        // A struct of strings and a number always serializes.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_pointer_celld_writes() {
        let body = br#"{"script_name":"hello","version":"0123456789abcdef","prefix":"deploy/hello/0123456789abcdef","rollout":{"percent":100}}"#;
        let pointer = DeployPointer::parse(body).unwrap();
        assert_eq!(pointer.script_name.as_deref(), Some("hello"));
        assert_eq!(pointer.version, "0123456789abcdef");
        assert_eq!(pointer.rollout, Some(Rollout { percent: Some(100) }));
        let again: serde_json::Value = serde_json::to_value(&pointer).unwrap();
        assert_eq!(
            again,
            serde_json::from_slice::<serde_json::Value>(body).unwrap()
        );
    }

    #[test]
    fn pointer_keys() {
        assert_eq!(script_pointer("hello"), "deploy/hello/current.json");
        assert_eq!(FLEET_POINTER, "deploy/current.json");
    }
}
