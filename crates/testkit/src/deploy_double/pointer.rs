//! The JSON documents a deploy writes: the deployment pointer (exactly as celld writes it) and
//! the version's manifest.
//! Deliberately independent of `celld_api::contract`: the harness tests compare the two.

use serde::Serialize;

use super::project::Project;

/// Key, relative to the bucket prefix, of the fleet's deployment pointer.
pub const FLEET_POINTER: &str = "deploy/current.json";

/// Key, relative to the bucket prefix, of a script's pointer.
pub fn script_pointer(script: &str) -> String {
    format!("deploy/{script}/current.json")
}

/// Key, relative to the bucket prefix, under which a version's modules live.
pub fn version_prefix(script: &str, version: &str) -> String {
    format!("deploy/{script}/{version}")
}

/// The deployment pointer, fields in celld's order.
#[derive(Debug, Serialize)]
pub struct Pointer<'a> {
    /// The script name.
    pub script_name: &'a str,
    /// The version id.
    pub version: &'a str,
    /// `deploy/<script>/<version>`.
    pub prefix: String,
    /// The share of traffic.
    pub rollout: Rollout,
}

/// The rollout of a pointer.
#[derive(Debug, Serialize)]
pub struct Rollout {
    /// Percent of traffic on this version: always 100.
    pub percent: u8,
}

/// The pointer's body: `{"script_name":..,"version":..,"prefix":"deploy/<name>/<version>","rollout":{"percent":100}}`.
pub fn pointer(script: &str, version: &str) -> String {
    let pointer = Pointer {
        script_name: script,
        version,
        prefix: version_prefix(script, version),
        rollout: Rollout { percent: 100 },
    };
    // Serializing a struct of strings and a number cannot fail.
    serde_json::to_string(&pointer).unwrap_or_default()
}

/// One module in the manifest.
#[derive(Debug, Serialize)]
pub struct ManifestModule<'a> {
    /// Path relative to the version prefix.
    pub path: &'a str,
    /// Size in bytes.
    pub size: u64,
}

/// `deploy/<script>/<version>/manifest.json`.
#[derive(Debug, Serialize)]
pub struct Manifest<'a> {
    /// The version id.
    pub version: &'a str,
    /// The script name.
    pub script: &'a str,
    /// The entry module.
    pub main: &'a str,
    /// Every module, with its size.
    pub modules: Vec<ManifestModule<'a>>,
    /// When the upload happened (RFC 3339, UTC).
    pub uploaded_at: String,
    /// Who wrote it: always the test double, so a bucket never passes this off as celld's work.
    pub uploaded_by: &'static str,
    /// The config's `vars`, which the Worker reads as its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vars: Option<&'a serde_json::Map<String, serde_json::Value>>,
}

/// The manifest of `project` at `version`, uploaded now.
pub fn manifest<'a>(project: &'a Project, version: &'a str) -> Manifest<'a> {
    Manifest {
        version,
        script: &project.name,
        main: &project.main,
        modules: project
            .modules
            .iter()
            .map(|m| ManifestModule {
                path: &m.path,
                size: m.bytes.len() as u64,
            })
            .collect(),
        uploaded_at: jiff::Timestamp::now().to_string(),
        uploaded_by: "celld-deploy-double (a test double of celld deploy)",
        vars: project.vars.as_ref(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_is_exactly_celld_s() {
        assert_eq!(
            pointer("hello", "0123456789abcdef"),
            r#"{"script_name":"hello","version":"0123456789abcdef","prefix":"deploy/hello/0123456789abcdef","rollout":{"percent":100}}"#
        );
        assert_eq!(script_pointer("hello"), "deploy/hello/current.json");
    }
}
