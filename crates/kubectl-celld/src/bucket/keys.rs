//! Keys of a deploy, relative to the fleet's bucket prefix, and the deployment pointer exactly
//! as `celld deploy` writes it.

use serde::{Deserialize, Serialize};

/// The fleet pointer every node reads.
pub const FLEET_POINTER: &str = "deploy/current.json";

/// Where every version lives.
pub const DEPLOY_DIR: &str = "deploy/";

/// A script's own pointer.
pub fn script_pointer(script: &str) -> String {
    format!("deploy/{script}/current.json")
}

/// The key prefix of one version's modules.
pub fn version_prefix(script: &str, version: &str) -> String {
    format!("deploy/{script}/{version}")
}

/// A version's manifest.
pub fn manifest_key(script: &str, version: &str) -> String {
    format!("{}/manifest.json", version_prefix(script, version))
}

/// `deploy/<script>/<version>/manifest.json` split into script and version; None for any other
/// key (pointers, modules, deeper paths).
pub fn parse_manifest_key(rel: &str) -> Option<(&str, &str)> {
    let rest = rel
        .strip_prefix(DEPLOY_DIR)?
        .strip_suffix("/manifest.json")?;
    let (script, version) = rest.split_once('/')?;
    (!script.is_empty() && !version.is_empty() && !version.contains('/'))
        .then_some((script, version))
}

/// The share of traffic a pointer gives its version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollout {
    /// Percent of requests on this version.
    pub percent: u8,
}

/// The deployment pointer: `{"script_name":..,"version":..,"prefix":"deploy/<name>/<version>",
/// "rollout":{"percent":100}}`, fields in celld's order (`script_name` may be absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pointer {
    /// The script name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_name: Option<String>,
    /// The version id (16 hex digits).
    pub version: String,
    /// `deploy/<script>/<version>`.
    pub prefix: String,
    /// The rollout.
    pub rollout: Rollout,
}

impl Pointer {
    /// The pointer `celld deploy` writes for `version` of `script`.
    pub fn to(script: &str, version: &str) -> Self {
        Pointer {
            script_name: Some(script.to_string()),
            version: version.to_string(),
            prefix: version_prefix(script, version),
            rollout: Rollout { percent: 100 },
        }
    }

    /// The script: `script_name`, else the middle of `prefix`.
    pub fn script(&self) -> Option<&str> {
        self.script_name.as_deref().or_else(|| {
            self.prefix
                .strip_prefix(DEPLOY_DIR)
                .and_then(|rest| rest.split('/').next())
        })
    }

    /// The compact JSON celld writes.
    pub fn body(&self) -> Vec<u8> {
        // A struct of strings and a number always serializes.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_is_exactly_celld_s() {
        assert_eq!(
            String::from_utf8(Pointer::to("hello", "0123456789abcdef").body()).unwrap(),
            r#"{"script_name":"hello","version":"0123456789abcdef","prefix":"deploy/hello/0123456789abcdef","rollout":{"percent":100}}"#
        );
        let old: Pointer = serde_json::from_str(
            r#"{"version":"ab","prefix":"deploy/w/ab","rollout":{"percent":100}}"#,
        )
        .unwrap();
        assert_eq!(old.script(), Some("w"));
    }

    #[test]
    fn manifest_keys() {
        assert_eq!(manifest_key("w", "ab"), "deploy/w/ab/manifest.json");
        assert_eq!(
            parse_manifest_key("deploy/w/ab/manifest.json"),
            Some(("w", "ab"))
        );
        assert_eq!(parse_manifest_key("deploy/w/ab/src/manifest.json"), None);
        assert_eq!(parse_manifest_key("deploy/current.json"), None);
        assert_eq!(parse_manifest_key("deploy/w/current.json"), None);
    }
}
