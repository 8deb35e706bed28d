//! Where the bucket is: `CELLD_BUCKET` as celld reads it, `[s3://|gs://|az://]NAME[/PREFIX]`,
//! no scheme meaning S3.

use crate::error::AgentError;
pub use celld_api::{BucketUrl as Location, Scheme as Cloud};

/// `CELLD_BUCKET` of this process's environment, parsed as celld and the operator parse it.
pub fn from_env() -> Result<Location, AgentError> {
    match std::env::var("CELLD_BUCKET") {
        Ok(url) if !url.is_empty() => Location::parse(&url).map_err(|_| AgentError::BadBucket(url)),
        _ => Err(AgentError::NoBucket),
    }
}

/// `rel` of a full `key` under `location`'s prefix; None for keys outside it.
pub fn relative<'a>(location: &Location, key: &'a str) -> Option<&'a str> {
    if location.prefix.is_empty() {
        Some(key)
    } else {
        key.strip_prefix(&location.prefix)?.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_celld_s_bucket_forms() {
        let l = Location::parse("gs://celld/web/a/").unwrap();
        assert_eq!(
            (l.scheme, l.name.as_str(), l.prefix.as_str()),
            (Cloud::Gcs, "celld", "web/a")
        );
        assert_eq!(l.key("deploy/current.json"), "web/a/deploy/current.json");
        assert_eq!(relative(&l, "web/a/deploy/x"), Some("deploy/x"));
        assert_eq!(relative(&l, "web/ab/deploy/x"), None);
        let root = Location::parse("celld").unwrap();
        assert_eq!((root.scheme, root.key("k")), (Cloud::S3, "k".to_string()));
        assert_eq!(Location::parse("az://c/p").unwrap().scheme, Cloud::Azure);
        assert!(Location::parse("https://x/y").is_err());
        assert!(Location::parse("s3:///y").is_err());
    }
}
