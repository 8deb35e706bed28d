//! Where the bucket is: `CELLD_BUCKET` as celld reads it, `[s3://|gs://|az://]NAME[/PREFIX]`,
//! no scheme meaning S3.

use crate::error::AgentError;

/// The object store a bucket lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// `s3://` or no scheme.
    S3,
    /// `gs://`.
    Gcs,
    /// `az://`: the name is the container.
    Azure,
}

/// A bucket and the key prefix every key of the fleet lives under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Which store.
    pub cloud: Cloud,
    /// The bucket (the container for Azure).
    pub name: String,
    /// The prefix without leading or trailing `/`; empty for the bucket's root.
    pub prefix: String,
}

impl Location {
    /// Parses `url`.
    pub fn parse(url: &str) -> Result<Self, AgentError> {
        let bad = || AgentError::BadBucket(url.to_string());
        let (cloud, rest) = [
            ("s3://", Cloud::S3),
            ("gs://", Cloud::Gcs),
            ("az://", Cloud::Azure),
        ]
        .into_iter()
        .find_map(|(scheme, cloud)| url.strip_prefix(scheme).map(|rest| (cloud, rest)))
        .unwrap_or((Cloud::S3, url));
        if rest.contains("://") {
            return Err(bad());
        }
        let (name, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if name.is_empty() {
            return Err(bad());
        }
        Ok(Self {
            cloud,
            name: name.to_string(),
            prefix: prefix.trim_matches('/').to_string(),
        })
    }

    /// `CELLD_BUCKET` of this process's environment.
    pub fn from_env() -> Result<Self, AgentError> {
        match std::env::var("CELLD_BUCKET") {
            Ok(url) if !url.is_empty() => Self::parse(&url),
            _ => Err(AgentError::NoBucket),
        }
    }

    /// The full key of `rel`, a key relative to the prefix.
    pub fn key(&self, rel: &str) -> String {
        if self.prefix.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.prefix)
        }
    }

    /// `rel` of a full key under the prefix; None for keys outside it.
    pub fn relative<'a>(&self, key: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            Some(key)
        } else {
            key.strip_prefix(&self.prefix)?.strip_prefix('/')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_celld_s_bucket_forms() {
        let l = Location::parse("gs://celld/web/a/").unwrap();
        assert_eq!(
            (l.cloud, l.name.as_str(), l.prefix.as_str()),
            (Cloud::Gcs, "celld", "web/a")
        );
        assert_eq!(l.key("deploy/current.json"), "web/a/deploy/current.json");
        assert_eq!(l.relative("web/a/deploy/x"), Some("deploy/x"));
        assert_eq!(l.relative("web/ab/deploy/x"), None);
        let root = Location::parse("celld").unwrap();
        assert_eq!((root.cloud, root.key("k")), (Cloud::S3, "k".to_string()));
        assert_eq!(Location::parse("az://c/p").unwrap().cloud, Cloud::Azure);
        assert!(Location::parse("https://x/y").is_err());
        assert!(Location::parse("s3:///y").is_err());
    }
}
