//! Keys of a deploy, relative to the fleet's bucket prefix, and the deployment pointer exactly
//! as `celld deploy` writes it.

pub use celld_api::contract::{DeployPointer as Pointer, FLEET_POINTER, Rollout, script_pointer};

/// Where every version lives.
pub const DEPLOY_DIR: &str = "deploy/";

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

/// What the plugin reads of a pointer besides its fields (the API's pointer builds and writes
/// itself: `Pointer::to`, `Pointer::body`).
pub trait PointerExt {
    /// The script: `script_name`, else the middle of `prefix`.
    fn script(&self) -> Option<&str>;
}

impl PointerExt for Pointer {
    fn script(&self) -> Option<&str> {
        self.script_name.as_deref().or_else(|| {
            self.prefix
                .as_deref()
                .and_then(|p| p.strip_prefix(DEPLOY_DIR))
                .and_then(|rest| rest.split('/').next())
        })
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
