//! What `celld-bucket` prints: one JSON object per run, tagged by `outcome`. Keys are relative
//! to the bucket prefix of `CELLD_BUCKET`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The version of an object a compare-and-swap write expects to replace: an S3 or Azure ETag,
/// or a GCS generation (GCS's conditional writes take generations, not ETags).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "value")]
pub enum Version {
    /// The ETag as the store sent it, quotes kept (it goes back as `If-Match`).
    #[serde(rename = "etag")]
    ETag(String),
    /// The GCS generation number.
    Generation(String),
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::ETag(etag) => write!(f, "ETag {etag}"),
            Version::Generation(generation) => write!(f, "generation {generation}"),
        }
    }
}

/// What a compare-and-swap write expects to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// No object: a create-only write.
    Absent,
    /// The object at this version.
    Version(Version),
}

impl Expect {
    /// The `put` flags that say it: `--if-absent`, `--if-etag ETAG` or `--if-generation N`.
    pub fn flags(&self) -> Vec<String> {
        match self {
            Expect::Absent => vec!["--if-absent".into()],
            Expect::Version(Version::ETag(etag)) => vec!["--if-etag".into(), etag.clone()],
            Expect::Version(Version::Generation(g)) => vec!["--if-generation".into(), g.clone()],
        }
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Absent => f.write_str("that it did not exist"),
            Expect::Version(v) => v.fmt(f),
        }
    }
}

/// One listed object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// Its key, relative to the bucket prefix.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written (RFC 3339).
    pub last_modified: String,
}

/// The answer of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum Answer {
    /// `get`: the object.
    #[serde(rename_all = "camelCase")]
    Object {
        /// Its content (UTF-8; pointers and manifests are JSON).
        body: String,
        /// What a compare-and-swap overwrite of it expects.
        version: Version,
        /// When it was last written (RFC 3339).
        last_modified: String,
    },
    /// `get`: no such object.
    Missing,
    /// `list`: every object under the prefix asked for.
    Listing {
        /// The objects, in the store's order.
        objects: Vec<Listed>,
    },
    /// `put`: written.
    Written,
    /// `put`: not written, the object was not as expected (another writer changed it).
    Changed,
    /// `merge-vars`: the Secrets' keys are in the config's `vars` (names only, never values).
    #[serde(rename_all = "camelCase")]
    VarsMerged {
        /// The config file merged into (`wrangler.jsonc` or `wrangler.json`).
        config: String,
        /// Every key taken from a Secret.
        keys: Vec<String>,
        /// The keys whose value in the config a Secret replaced.
        overridden: Vec<String>,
    },
    /// Anything else: what went wrong, and what to do.
    Failed {
        /// The message.
        error: String,
    },
}

impl Answer {
    /// The answer as one line of JSON.
    pub fn to_line(&self) -> String {
        // An enum of strings and numbers always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_tagged_json() {
        let object = Answer::Object {
            body: "{}".into(),
            version: Version::Generation("17".into()),
            last_modified: "2026-12-01T04:17:09+00:00".into(),
        };
        assert_eq!(
            object.to_line(),
            r#"{"outcome":"object","body":"{}","version":{"kind":"generation","value":"17"},"lastModified":"2026-12-01T04:17:09+00:00"}"#
        );
        assert_eq!(Answer::Changed.to_line(), r#"{"outcome":"changed"}"#);
        let merged = Answer::VarsMerged {
            config: "wrangler.jsonc".into(),
            keys: vec!["API_KEY".into()],
            overridden: vec![],
        };
        assert_eq!(
            merged.to_line(),
            r#"{"outcome":"varsMerged","config":"wrangler.jsonc","keys":["API_KEY"],"overridden":[]}"#
        );
        let back: Answer = serde_json::from_str(&object.to_line()).unwrap();
        assert_eq!(back, object);
    }

    #[test]
    fn expectations_become_flags_and_words() {
        let etag = Expect::Version(Version::ETag("\"e1\"".into()));
        assert_eq!(etag.flags(), ["--if-etag", "\"e1\""]);
        assert_eq!(etag.to_string(), "ETag \"e1\"");
        assert_eq!(Expect::Absent.flags(), ["--if-absent"]);
        let g = Expect::Version(Version::Generation("5".into()));
        assert_eq!(g.flags(), ["--if-generation", "5"]);
        assert_eq!(g.to_string(), "generation 5");
    }
}
