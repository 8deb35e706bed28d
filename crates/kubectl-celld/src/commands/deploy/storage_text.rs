//! Where a deploy writes, in words (never a credential): one line for the progress of a deploy,
//! and a short cell for the table of a fan-out.

use celld_api::{ResolvedStorage, Scheme};

/// One line naming where the deploy writes.
pub fn describe_storage(storage: &ResolvedStorage) -> String {
    let mut s = format!("bucket {}", storage.bucket);
    match storage.bucket.scheme {
        Scheme::S3 => {
            if let Some(e) = &storage.endpoint {
                s.push_str(&format!(", endpoint {e}"));
            }
            s.push_str(&format!(", region {}", storage.region));
        }
        Scheme::Azure => {
            if let Some(account) = &storage.azure_storage_account {
                s.push_str(&format!(", storage account {account}"));
            }
        }
        Scheme::Gcs => {}
    }
    match &storage.store {
        Some(store) => s.push_str(&format!(" (from CelldObjectStore {store}")),
        None => s.push_str(" (inline"),
    }
    match &storage.credentials_secret {
        Some(secret) => s.push_str(&format!(", credentials from Secret {secret})")),
        None => s.push_str(", workload identity)"),
    }
    s
}

/// The bucket and where it comes from, for a table cell: `s3://celld/web (store minio)`,
/// `gs://celld/web (inline)`.
pub fn storage_cell(storage: &ResolvedStorage) -> String {
    match &storage.store {
        Some(store) => format!("{} (store {store})", storage.bucket),
        None => format!("{} (inline)", storage.bucket),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::BucketUrl;

    fn storage(endpoint: Option<&str>, store: Option<&str>) -> ResolvedStorage {
        ResolvedStorage {
            store: store.map(Into::into),
            bucket: BucketUrl::parse("s3://celld/web").unwrap(),
            endpoint: endpoint.map(Into::into),
            region: "auto".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: Some("creds".into()),
        }
    }

    #[test]
    fn azure_line_names_the_account_and_the_identity() {
        let mut s = storage(None, None);
        s.bucket = BucketUrl::parse("az://workers/web").unwrap();
        s.azure_storage_account = Some("companycelld".into());
        s.credentials_secret = None;
        insta::assert_snapshot!(describe_storage(&s), @"bucket az://workers/web, storage account companycelld (inline, workload identity)");
        insta::assert_snapshot!(storage_cell(&s), @"az://workers/web (inline)");
    }

    #[test]
    fn storage_line_names_no_secret_value() {
        let s = storage(Some("http://minio:9000"), Some("minio"));
        insta::assert_snapshot!(describe_storage(&s), @"bucket s3://celld/web, endpoint http://minio:9000, region auto (from CelldObjectStore minio, credentials from Secret creds)");
        insta::assert_snapshot!(storage_cell(&s), @"s3://celld/web (store minio)");
    }
}
