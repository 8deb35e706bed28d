//! S3 clients shared by every fleet with the same endpoint, region and credentials: one
//! connection pool per object store, whatever the number of fleets and bucket prefixes on it.
//! A client no fleet used for [`IDLE`] is dropped with its connections.

use crate::pointer;
use celld_api::ResolvedStorage;
use celld_api::labels::secret_keys;
use k8s_openapi::api::core::v1::Secret;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a client nobody uses is kept.
pub const IDLE: Duration = Duration::from_secs(600);

/// What makes two fleets able to share a client: endpoint, region and credentials (never the
/// bucket or prefix, which are per request).
pub fn key(storage: &ResolvedStorage, secret: &Secret) -> String {
    let mut h = Sha256::new();
    for part in [
        storage.endpoint.as_deref().unwrap_or("").as_bytes(),
        storage.region.as_bytes(),
    ] {
        h.update(part);
        h.update([0]);
    }
    for key in [
        secret_keys::ACCESS_KEY_ID,
        secret_keys::SECRET_ACCESS_KEY,
        secret_keys::SESSION_TOKEN,
    ] {
        if let Some(v) = secret.data.as_ref().and_then(|d| d.get(key)) {
            h.update(&v.0);
        }
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

/// The shared clients, by [`key`], with when each was last used.
pub struct S3Clients {
    timeout: Duration,
    clients: Mutex<HashMap<String, (aws_sdk_s3::Client, Instant)>>,
}

impl S3Clients {
    /// No clients yet; each request of the clients it builds is bounded by `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `storage` with the credentials in `secret`, built the first time; the
    /// message says why there is none.
    pub fn get(
        &self,
        storage: &ResolvedStorage,
        secret: &Secret,
    ) -> Result<aws_sdk_s3::Client, String> {
        self.get_or_build(&key(storage, secret), Instant::now(), || {
            pointer::client(storage, secret, self.timeout)
        })
    }

    fn get_or_build(
        &self,
        key: &str,
        now: Instant,
        build: impl FnOnce() -> Result<aws_sdk_s3::Client, String>,
    ) -> Result<aws_sdk_s3::Client, String> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        clients.retain(|_, (_, used)| now.saturating_duration_since(*used) < IDLE);
        if let Some((client, used)) = clients.get_mut(key) {
            *used = now;
            return Ok(client.clone());
        }
        let client = build()?;
        clients.insert(key.to_string(), (client.clone(), now));
        Ok(client)
    }

    /// How many clients are held.
    pub fn len(&self) -> usize {
        self.clients.lock().map(|c| c.len()).unwrap_or_default()
    }

    /// Whether no client is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::BucketUrl;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    fn storage(bucket: &str) -> ResolvedStorage {
        ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse(bucket).unwrap(),
            endpoint: Some("http://127.0.0.1:9000".into()),
            region: "us-east-1".into(),
            allow_http: true,
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
            ])),
            ..Secret::default()
        }
    }

    #[test]
    fn fleets_on_one_store_share_a_client_whatever_their_prefix() {
        assert_eq!(
            key(&storage("s3://b/one"), &secret("s")),
            key(&storage("s3://other/two"), &secret("s"))
        );
        assert_ne!(
            key(&storage("s3://b/one"), &secret("s")),
            key(&storage("s3://b/one"), &secret("rotated"))
        );
        let mut elsewhere = storage("s3://b/one");
        elsewhere.region = "eu-west-1".into();
        assert_ne!(
            key(&storage("s3://b/one"), &secret("s")),
            key(&elsewhere, &secret("s"))
        );
    }

    #[test]
    fn a_client_is_built_once_and_dropped_when_idle() {
        let clients = S3Clients::new(Duration::from_secs(1));
        let start = Instant::now();
        let built = std::cell::Cell::new(0);
        let build = || {
            built.set(built.get() + 1);
            pointer::client(&storage("s3://b/p"), &secret("s"), Duration::from_secs(1))
        };
        clients.get_or_build("k", start, build).unwrap();
        clients
            .get_or_build("k", start + Duration::from_secs(1), build)
            .unwrap();
        assert_eq!(built.get(), 1);
        clients
            .get_or_build("other", start + IDLE + Duration::from_secs(2), || {
                pointer::client(&storage("s3://b/p"), &secret("x"), Duration::from_secs(1))
            })
            .unwrap();
        assert_eq!(clients.len(), 1, "the idle client was dropped");
        clients
            .get_or_build("k", start + IDLE + Duration::from_secs(2), build)
            .unwrap();
        assert_eq!(built.get(), 2);
    }
}
