//! A fleet's resolved storage for unit tests: `bucket` on AWS S3 (no endpoint, us-east-1),
//! read with workload identity; a test changes the fields it is about
//! (`ResolvedStorage { credentials_secret: Some(..), ..storage_fixture::s3("s3://b/web") }`).

use celld_api::{BucketUrl, ResolvedStorage};

/// The storage of `bucket` (a valid bucket URL).
pub fn s3(bucket: &str) -> ResolvedStorage {
    ResolvedStorage {
        store: None,
        bucket: BucketUrl::parse(bucket).unwrap_or_else(|e| panic!("a test's bucket: {e}")),
        endpoint: None,
        region: "us-east-1".into(),
        allow_http: false,
        azure_storage_account: None,
        credentials_secret: None,
    }
}
