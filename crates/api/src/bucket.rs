//! `s3://NAME[/PREFIX]` bucket URLs.

use std::fmt;

/// A parsed `s3://NAME[/PREFIX]` bucket URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketUrl {
    /// The S3 bucket name.
    pub name: String,
    /// The key prefix inside the bucket, without leading or trailing `/`; empty for the root.
    pub prefix: String,
}

/// A bucket URL that is not `s3://NAME[/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bucket '{0}' is not s3://NAME[/PREFIX]; write it like s3://company-celld/api")]
pub struct BadBucketUrl(pub String);

impl BucketUrl {
    /// Parses `s3://NAME[/PREFIX]`. The admission rules guarantee the shape of stored fleets;
    /// this only splits it.
    pub fn parse(url: &str) -> Result<Self, BadBucketUrl> {
        let rest = url
            .strip_prefix("s3://")
            .ok_or_else(|| BadBucketUrl(url.to_string()))?;
        let (name, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if name.is_empty() {
            return Err(BadBucketUrl(url.to_string()));
        }
        Ok(Self {
            name: name.to_string(),
            prefix: prefix.trim_matches('/').to_string(),
        })
    }

    /// The object key of `path` under this prefix.
    pub fn key(&self, path: &str) -> String {
        if self.prefix.is_empty() {
            path.to_string()
        } else {
            format!("{}/{}", self.prefix, path)
        }
    }
}

impl fmt::Display for BucketUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.prefix.is_empty() {
            write!(f, "s3://{}", self.name)
        } else {
            write!(f, "s3://{}/{}", self.name, self.prefix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_name_and_prefix() {
        let b = BucketUrl::parse("s3://celld/local-poc/a").unwrap();
        assert_eq!(b.name, "celld");
        assert_eq!(b.prefix, "local-poc/a");
        assert_eq!(
            b.key("deploy/current.json"),
            "local-poc/a/deploy/current.json"
        );
        assert_eq!(b.to_string(), "s3://celld/local-poc/a");
    }

    #[test]
    fn root_of_bucket() {
        let b = BucketUrl::parse("s3://celld").unwrap();
        assert_eq!(b.prefix, "");
        assert_eq!(b.key("deploy/current.json"), "deploy/current.json");
    }

    #[test]
    fn refuses_other_schemes() {
        assert!(BucketUrl::parse("gs://celld/x").is_err());
        assert!(BucketUrl::parse("s3:///x").is_err());
    }
}
