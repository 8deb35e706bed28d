//! Bucket URLs as celld takes them: `[s3://|gs://|az://]NAME[/PREFIX]`, no scheme meaning S3.

use std::fmt;

/// The object store a bucket lives in, from its URL's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `s3://` (or no scheme): AWS S3 or an S3-compatible store.
    S3,
    /// `gs://`: Google Cloud Storage.
    Gcs,
    /// `az://`: Azure Blob Storage; NAME is the container.
    Azure,
}

impl Scheme {
    /// The URL prefix, such as `gs://`.
    pub fn prefix(self) -> &'static str {
        match self {
            Self::S3 => "s3://",
            Self::Gcs => "gs://",
            Self::Azure => "az://",
        }
    }

    /// The store's name in messages.
    pub fn store_name(self) -> &'static str {
        match self {
            Self::S3 => "S3",
            Self::Gcs => "Google Cloud Storage",
            Self::Azure => "Azure Blob Storage",
        }
    }
}

/// A parsed bucket URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketUrl {
    /// Which object store.
    pub scheme: Scheme,
    /// The bucket name (the container for Azure).
    pub name: String,
    /// The key prefix inside the bucket, without leading or trailing `/`; empty for the root.
    pub prefix: String,
}

/// A bucket URL that is not `[s3://|gs://|az://]NAME[/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bucket '{0}' is not [s3://|gs://|az://]NAME[/PREFIX]; write it like s3://company-celld/api, gs://company-celld/api or az://celld/api"
)]
pub struct BadBucketUrl(pub String);

impl BucketUrl {
    /// Parses `[s3://|gs://|az://]NAME[/PREFIX]` (no scheme is S3, as in celld). The admission
    /// rules guarantee the shape of stored fleets; this only splits it.
    pub fn parse(url: &str) -> Result<Self, BadBucketUrl> {
        let bad = || BadBucketUrl(url.to_string());
        let (scheme, rest) = [Scheme::S3, Scheme::Gcs, Scheme::Azure]
            .into_iter()
            .find_map(|s| url.strip_prefix(s.prefix()).map(|rest| (s, rest)))
            .unwrap_or((Scheme::S3, url));
        if rest.contains("://") {
            return Err(bad());
        }
        let (name, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if name.is_empty() {
            return Err(bad());
        }
        Ok(Self {
            scheme,
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

    /// The URL of the object `path` under this prefix, such as `gs://b/p/deploy/current.json`.
    pub fn object_url(&self, path: &str) -> String {
        format!("{}{}/{}", self.scheme.prefix(), self.name, self.key(path))
    }
}

impl fmt::Display for BucketUrl {
    /// The URL with its scheme always written (`s3://` for a URL given without one).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.scheme.prefix(), self.name)?;
        if !self.prefix.is_empty() {
            write!(f, "/{}", self.prefix)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_name_and_prefix() {
        let b = BucketUrl::parse("s3://celld/local-poc/a").unwrap();
        assert_eq!(b.scheme, Scheme::S3);
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
        assert_eq!(
            b.object_url("deploy/current.json"),
            "s3://celld/deploy/current.json"
        );
    }

    #[test]
    fn gcs_and_azure() {
        let gs = BucketUrl::parse("gs://celld/web").unwrap();
        assert_eq!((gs.scheme, gs.name.as_str()), (Scheme::Gcs, "celld"));
        assert_eq!(gs.to_string(), "gs://celld/web");
        let az = BucketUrl::parse("az://workers").unwrap();
        assert_eq!((az.scheme, az.prefix.as_str()), (Scheme::Azure, ""));
        assert_eq!(
            az.object_url("deploy/current.json"),
            "az://workers/deploy/current.json"
        );
    }

    #[test]
    fn no_scheme_is_s3_and_written_with_it() {
        let b = BucketUrl::parse("celld/app").unwrap();
        assert_eq!(b.scheme, Scheme::S3);
        assert_eq!(b.to_string(), "s3://celld/app");
    }

    #[test]
    fn refuses_other_schemes_and_empty_names() {
        assert!(BucketUrl::parse("https://celld/x").is_err());
        assert!(BucketUrl::parse("s3:///x").is_err());
        assert!(BucketUrl::parse("gs://").is_err());
    }
}
