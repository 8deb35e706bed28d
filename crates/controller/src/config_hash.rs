//! The pod-template configuration hash: changes when the resolved storage or the contents of the
//! credentials Secret change, so the fleet rolls onto the new configuration.

use celld_api::ResolvedStorage;
use celld_api::labels::secret_keys;
use k8s_openapi::api::core::v1::Secret;
use sha2::{Digest, Sha256};

/// A short hex hash of the storage configuration and the credentials the pods read.
pub fn compute(storage: &ResolvedStorage, secret: &Secret) -> String {
    let mut h = Sha256::new();
    for part in [
        storage.bucket.to_string().as_str(),
        storage.endpoint.as_deref().unwrap_or(""),
        storage.region.as_str(),
        storage.credentials_secret.as_str(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for key in [
        secret_keys::ACCESS_KEY_ID,
        secret_keys::SECRET_ACCESS_KEY,
        secret_keys::SESSION_TOKEN,
    ] {
        h.update(key.as_bytes());
        h.update([0]);
        if let Some(v) = secret.data.as_ref().and_then(|d| d.get(key)) {
            h.update(&v.0);
        }
        h.update([0]);
    }
    hex::encode(&h.finalize()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::BucketUrl;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    fn storage() -> ResolvedStorage {
        ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse("s3://b/p").unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            credentials_secret: "creds".into(),
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
            compute(&storage(), &secret("one")),
            compute(&storage(), &secret("two"))
        );
        assert_eq!(
            compute(&storage(), &secret("one")),
            compute(&storage(), &secret("one"))
        );
    }

    #[test]
    fn unrelated_keys_do_not_roll_the_fleet() {
        let mut other = secret("one");
        if let Some(d) = other.data.as_mut() {
            d.insert("unrelated".into(), ByteString(b"y".to_vec()));
        }
        assert_eq!(
            compute(&storage(), &secret("one")),
            compute(&storage(), &other)
        );
    }

    #[test]
    fn moving_the_endpoint_changes_the_hash() {
        let mut moved = storage();
        moved.endpoint = Some("https://s3.example.com".into());
        assert_ne!(
            compute(&storage(), &secret("one")),
            compute(&moved, &secret("one"))
        );
    }
}
