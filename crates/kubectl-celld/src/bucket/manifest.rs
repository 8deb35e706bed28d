//! A version's `manifest.json`, read leniently: celld v0.4's contract names the file but not
//! its fields, so each field used here is optional and unknown fields are ignored. celld and
//! its test double write `version`, `script`, `modules` (`path`, `size`) and `uploaded_at`.

use serde::Deserialize;

/// One module.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Module {
    /// Its size in bytes.
    #[serde(default)]
    pub size: Option<u64>,
}

/// The fields of a manifest this plugin reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Manifest {
    /// The version id.
    #[serde(default)]
    pub version: Option<String>,
    /// The script name.
    #[serde(default)]
    pub script: Option<String>,
    /// The modules.
    #[serde(default)]
    pub modules: Option<Vec<Module>>,
    /// When it was uploaded (RFC 3339).
    #[serde(default)]
    pub uploaded_at: Option<String>,
}

/// Parses a manifest; the error says what is wrong with it.
pub fn parse(body: &[u8]) -> Result<Manifest, String> {
    serde_json::from_slice(body).map_err(|e| format!("manifest.json is not valid JSON: {e}"))
}

impl Manifest {
    /// What makes this manifest unusable for `version` of `script`: another version or script
    /// named inside.
    pub fn mismatch(&self, script: &str, version: &str) -> Option<String> {
        match (&self.version, &self.script) {
            (Some(v), _) if v != version => Some(format!(
                "its manifest.json names version {v}, not {version}"
            )),
            (_, Some(s)) if s != script => {
                Some(format!("its manifest.json names script {s}, not {script}"))
            }
            _ => None,
        }
    }

    /// Module count and total size, when the manifest lists them.
    pub fn modules(&self) -> Option<(usize, u64)> {
        self.modules
            .as_ref()
            .map(|m| (m.len(), m.iter().filter_map(|m| m.size).sum()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_it_knows_and_ignores_the_rest() {
        let m = parse(br#"{"version":"ab","script":"w","main":"src/index.js","modules":[{"path":"a.js","size":10},{"path":"b.js","size":5}],"uploaded_at":"2026-11-30T15:00:00Z","extra":1}"#).unwrap();
        assert_eq!(m.modules(), Some((2, 15)));
        assert_eq!(m.mismatch("w", "ab"), None);
        assert!(m.mismatch("w", "cd").unwrap().contains("names version ab"));
        assert!(m.mismatch("x", "ab").unwrap().contains("names script w"));
        assert_eq!(parse(b"{}").unwrap().modules(), None);
        assert!(parse(b"<html>").unwrap_err().contains("not valid JSON"));
    }
}
