//! A deployed version's `manifest.json`, as far as the operator reads it: the features a node
//! must serve to adopt the version (`required_features`). Every other field is ignored, and a
//! manifest that lists none requires nothing; a body that is not such a manifest is an error,
//! never an empty list.

use serde::Deserialize;

/// Key of the directory of `version` of the Worker `script` under the bucket prefix: its
/// modules and manifest, as the pointer's `prefix` names it.
pub fn version_prefix(script: &str, version: &str) -> String {
    format!("deploy/{script}/{version}")
}

/// Key of the manifest of `version` of the Worker `script` under the bucket prefix.
pub fn manifest_key(script: &str, version: &str) -> String {
    format!("{}/manifest.json", version_prefix(script, version))
}

/// The part of a version's manifest the operator reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Manifest {
    /// Features a node must serve to adopt the version; celld refuses a version requiring one
    /// it does not know (HTTP 422 on reload) and keeps serving the one before.
    #[serde(default)]
    pub required_features: Vec<String>,
}

impl Manifest {
    /// Parses a manifest, ignoring the fields the operator does not read. A body that is not a
    /// JSON object, or whose `required_features` is not a list of strings, is an error.
    pub fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        // Through a map: a struct would also be read from a JSON array.
        let object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body)?;
        serde_json::from_value(serde_json::Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_required_features_and_ignores_the_rest() {
        let body = br#"{"version":"00000000000000c1","script":"web","modules":[{"path":"a.js","size":3,"sha256":"ab"}],"containers":[{"class_name":"Box"}],"required_features":["containers-v1"]}"#;
        assert_eq!(
            Manifest::parse(body).unwrap().required_features,
            ["containers-v1"]
        );
        assert_eq!(
            Manifest::parse(br#"{"version":"v"}"#).unwrap(),
            Manifest::default()
        );
    }

    #[test]
    fn anything_else_is_an_error_not_an_empty_list() {
        for body in [
            &b"<html>not found</html>"[..],
            b"",
            b"[]",
            b"null",
            br#"{"required_features":null}"#,
            br#"{"required_features":"containers-v1"}"#,
            br#"{"required_features":[1]}"#,
        ] {
            assert!(
                Manifest::parse(body).is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn keys_follow_the_pointer_prefix() {
        assert_eq!(version_prefix("web", "ab"), "deploy/web/ab");
        assert_eq!(manifest_key("web", "ab"), "deploy/web/ab/manifest.json");
    }
}
