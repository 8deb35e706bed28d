//! The pod-template configuration hash: changes when the resolved storage or the contents of the
//! credentials Secret change, so the fleet rolls onto the new configuration.

use crate::children::storage_env;
use celld_api::ResolvedStorage;
use k8s_openapi::api::core::v1::Secret;
use sha2::{Digest, Sha256};

/// A short hex hash of the storage configuration and the credentials the pods read (`secret`,
/// None without a credentials Secret). An S3 fleet's hash is what it was before GCS and Azure
/// were supported, so upgrading the operator rolls no S3 fleet.
pub fn compute(storage: &ResolvedStorage, secret: Option<&Secret>) -> String {
    let mut h = Sha256::new();
    for part in [
        storage.bucket.to_string().as_str(),
        storage.endpoint.as_deref().unwrap_or(""),
        storage.region.as_str(),
        storage.credentials_secret.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for (key, _) in storage_env::secret_keys(storage.bucket.scheme) {
        h.update(key.as_bytes());
        h.update([0]);
        if let Some(v) = secret
            .and_then(|s| s.data.as_ref())
            .and_then(|d| d.get(*key))
        {
            h.update(&v.0);
        }
        h.update([0]);
    }
    if let Some(account) = &storage.azure_storage_account {
        h.update(account.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::BucketUrl;
    use celld_api::labels::secret_keys;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    fn storage() -> ResolvedStorage {
        ResolvedStorage {
            credentials_secret: Some("creds".into()),
            ..crate::buckets::storage_fixture::s3("s3://b/p")
        }
    }

    fn secret(sk: &str) -> Secret {
        Secret {
            data: Some(BTreeMap::from([
                (
                    secret_keys::ACCESS_KEY_ID.to_string(),
                    ByteString(b"AK".to_vec()),
                ),
                (
                    secret_keys::SECRET_ACCESS_KEY.to_string(),
                    ByteString(sk.as_bytes().to_vec()),
                ),
                ("unrelated".to_string(), ByteString(b"x".to_vec())),
            ])),
            ..Secret::default()
        }
    }

    #[test]
    fn rotating_the_secret_changes_the_hash() {
        assert_ne!(
            compute(&storage(), Some(&secret("one"))),
            compute(&storage(), Some(&secret("two")))
        );
        assert_eq!(
            compute(&storage(), Some(&secret("one"))),
            compute(&storage(), Some(&secret("one")))
        );
    }

    #[test]
    fn an_s3_fleet_keeps_the_hash_it_had_before_gcs_and_azure() {
        assert_eq!(
            compute(&storage(), Some(&secret("one"))),
            "1ecd11c134a932bf"
        );
    }

    #[test]
    fn rotating_a_gcs_or_azure_key_changes_the_hash() {
        for (bucket, key, account) in [
            ("gs://b/p", secret_keys::GOOGLE_SERVICE_ACCOUNT_KEY, None),
            (
                "az://b/p",
                secret_keys::AZURE_STORAGE_ACCOUNT_KEY,
                Some("acct"),
            ),
        ] {
            let mut s = storage();
            s.bucket = BucketUrl::parse(bucket).unwrap();
            s.azure_storage_account = account.map(Into::into);
            let with = |v: &[u8]| Secret {
                data: Some(BTreeMap::from([(key.to_string(), ByteString(v.to_vec()))])),
                ..Secret::default()
            };
            assert_ne!(
                compute(&s, Some(&with(b"one"))),
                compute(&s, Some(&with(b"two"))),
                "{bucket}"
            );
            assert_ne!(compute(&s, Some(&with(b"one"))), compute(&s, None));
        }
    }

    #[test]
    fn another_azure_account_changes_the_hash() {
        let mut s = storage();
        s.bucket = BucketUrl::parse("az://b/p").unwrap();
        s.azure_storage_account = Some("one".into());
        let mut other = s.clone();
        other.azure_storage_account = Some("two".into());
        assert_ne!(compute(&s, None), compute(&other, None));
    }

    #[test]
    fn unrelated_keys_do_not_roll_the_fleet() {
        let mut other = secret("one");
        if let Some(d) = other.data.as_mut() {
            d.insert("unrelated".into(), ByteString(b"y".to_vec()));
        }
        assert_eq!(
            compute(&storage(), Some(&secret("one"))),
            compute(&storage(), Some(&other))
        );
    }

    #[test]
    fn moving_the_endpoint_changes_the_hash() {
        let mut moved = storage();
        moved.endpoint = Some("https://s3.example.com".into());
        assert_ne!(
            compute(&storage(), Some(&secret("one"))),
            compute(&moved, Some(&secret("one")))
        );
    }
}
