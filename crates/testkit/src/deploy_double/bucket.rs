//! `--bucket [s3://]NAME[/PREFIX]` as celld reads it (no scheme means S3), and the keys of a
//! deploy under PREFIX.

use std::fmt;

use super::error::DeployError;

/// An S3 bucket and the key prefix every key of the fleet lives under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    /// The bucket's name.
    pub name: String,
    /// The prefix without leading or trailing `/`; empty for the bucket's root.
    pub prefix: String,
}

impl Bucket {
    /// Parses `value`, an S3 bucket. `gs://` and `az://` are refused: those go through
    /// [`super::cloud::CloudStore`].
    pub fn parse(value: &str) -> Result<Self, DeployError> {
        let problem = |problem: &str| DeployError::Bucket {
            value: value.to_string(),
            problem: problem.to_string(),
        };
        let rest = if let Some(rest) = value.strip_prefix("s3://") {
            rest
        } else if value.starts_with("gs://") || value.starts_with("az://") {
            return Err(problem(
                "not an S3 bucket: the test double writes gs:// and az:// buckets through their emulators (deploy_double::cloud)",
            ));
        } else if value.contains("://") {
            return Err(problem(
                "unknown scheme: use s3://NAME[/PREFIX] (or NAME[/PREFIX])",
            ));
        } else {
            value
        };
        let (name, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let name_ok = (3..=63).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
        if !name_ok {
            return Err(problem(
                "the bucket name must be 3 to 63 lowercase letters, digits, '-' or '.'",
            ));
        }
        let prefix = prefix.trim_matches('/');
        let prefix_ok = prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
        if !prefix_ok || prefix.split('/').any(|part| part == "..") {
            return Err(problem(
                "the prefix may hold only letters, digits, '-', '_', '.' and '/' (and no '..')",
            ));
        }
        Ok(Bucket {
            name: name.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// The full key of `rel` (a key relative to the prefix, such as `deploy/current.json`).
    pub fn key(&self, rel: &str) -> String {
        if self.prefix.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.prefix)
        }
    }
}

impl fmt::Display for Bucket {
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
    fn parses_with_and_without_scheme_and_prefix() {
        let b = Bucket::parse("s3://celld-test/demo/hello/").unwrap();
        assert_eq!(
            (b.name.as_str(), b.prefix.as_str()),
            ("celld-test", "demo/hello")
        );
        assert_eq!(
            b.key("deploy/current.json"),
            "demo/hello/deploy/current.json"
        );
        assert_eq!(b.to_string(), "s3://celld-test/demo/hello");
        let b = Bucket::parse("celld").unwrap();
        assert_eq!(b.key("deploy/current.json"), "deploy/current.json");
        assert_eq!(b.to_string(), "s3://celld");
    }

    #[test]
    fn refuses_other_stores_and_bad_names() {
        for (value, want) in [
            ("gs://b/p", "not an S3 bucket"),
            ("az://b", "not an S3 bucket"),
            ("http://b", "unknown scheme"),
            ("s3://", "bucket name"),
            ("s3://Upper", "bucket name"),
            ("s3://bucket/a b", "prefix"),
            ("s3://bucket/a/../b", "prefix"),
        ] {
            let err = Bucket::parse(value).unwrap_err().to_string();
            assert!(err.contains(want), "{value}: {err}");
        }
    }
}
