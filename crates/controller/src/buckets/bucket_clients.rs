//! Bucket clients shared by every fleet with the same bucket, connection and credentials: one
//! connection pool per bucket (an `object_store` client is bound to one), whatever the number
//! of fleets and prefixes in it. A client is dropped with its connections by the next
//! housekeeping round once every fleet that used it is deleted, or once no fleet used it for
//! two resync periods: every fleet is reconciled, and gets its client, at least once a period,
//! so the fleets of such a client moved to other buckets or credentials.

use crate::buckets::object_store::{StoreEndpoints, StoreSource};
use crate::buckets::pointer::PointerSource;
use crate::children::storage_env;
use crate::map_retain;
use celld_api::ResolvedStorage;
use k8s_openapi::api::core::v1::Secret;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What makes two fleets able to share a client: the store, its connection, the bucket and the
/// credentials (with `secret`, None for the operator's own identity); never the prefix, which is
/// per request.
pub fn key(storage: &ResolvedStorage, secret: Option<&Secret>) -> String {
    let mut h = Sha256::new();
    for part in [
        storage.bucket.scheme.prefix(),
        storage.endpoint.as_deref().unwrap_or(""),
        storage.region.as_str(),
        storage.azure_storage_account.as_deref().unwrap_or(""),
        storage.bucket.name.as_str(),
        if secret.is_some() {
            "secret"
        } else {
            "identity"
        },
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for (key, _) in storage_env::secret_keys(storage.bucket.scheme) {
        if let Some(v) = secret
            .and_then(|s| s.data.as_ref())
            .and_then(|d| d.get(*key))
        {
            h.update(&v.0);
        }
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

/// A shared client.
pub type Client = Arc<dyn PointerSource>;

/// One shared client, when it was last used, and the uids of the fleets that used it.
struct Entry {
    client: Client,
    used: Instant,
    fleets: HashSet<String>,
}

/// The shared clients, by [`key`].
pub struct BucketClients {
    timeout: Duration,
    endpoints: StoreEndpoints,
    /// How long a client nobody used is kept.
    idle: Duration,
    clients: Mutex<HashMap<String, Entry>>,
}

impl BucketClients {
    /// No clients yet; each request of the clients it builds is bounded by `timeout`, gs://
    /// and az:// buckets are read at `endpoints` when set, and a client no fleet used for two
    /// `resync` periods is dropped.
    pub fn new(timeout: Duration, endpoints: StoreEndpoints, resync: Duration) -> Self {
        Self {
            timeout,
            endpoints,
            idle: resync.saturating_mul(2),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `storage` with the credentials in `secret` (None: the operator's own
    /// identity), built the first time, for the fleet with uid `fleet`. The message says why
    /// there is none.
    pub fn get(
        &self,
        fleet: &str,
        storage: &ResolvedStorage,
        secret: Option<&Secret>,
    ) -> Result<Client, String> {
        self.get_or_build(&key(storage, secret), fleet, Instant::now(), || {
            Ok(Arc::new(StoreSource::new(
                storage,
                secret,
                &self.endpoints,
                self.timeout,
            )?) as Client)
        })
    }

    fn get_or_build(
        &self,
        key: &str,
        fleet: &str,
        now: Instant,
        build: impl FnOnce() -> Result<Client, String>,
    ) -> Result<Client, String> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = clients.get_mut(key) {
            entry.used = now;
            if !entry.fleets.contains(fleet) {
                entry.fleets.insert(fleet.to_string());
            }
            return Ok(entry.client.clone());
        }
        let client = build()?;
        clients.insert(
            key.to_string(),
            Entry {
                client: client.clone(),
                used: now,
                fleets: HashSet::from([fleet.to_string()]),
            },
        );
        Ok(client)
    }

    /// Drops, with their connection pools, the clients whose fleets are all deleted (none of
    /// their uids is in `live`) and those no fleet used for two resync periods; returns how
    /// many are left. A fleet created after `live` was read can only lose its client, which
    /// its next reconcile builds again.
    pub fn drop_unused(&self, now: Instant, live: &HashMap<&str, &str>) -> usize {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        map_retain::retain(&mut clients, |_, entry| {
            entry.fleets.retain(|uid| live.contains_key(uid.as_str()));
            !entry.fleets.is_empty() && now.saturating_duration_since(entry.used) < self.idle
        });
        clients.len()
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
    use celld_api::labels::secret_keys;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    fn storage(bucket: &str) -> ResolvedStorage {
        ResolvedStorage {
            endpoint: Some("http://127.0.0.1:9000".into()),
            allow_http: true,
            credentials_secret: Some("creds".into()),
            ..crate::buckets::storage_fixture::s3(bucket)
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
    fn fleets_in_one_bucket_share_a_client_whatever_their_prefix() {
        assert_eq!(
            key(&storage("s3://b/one"), Some(&secret("s"))),
            key(&storage("s3://b/two"), Some(&secret("s")))
        );
        assert_ne!(
            key(&storage("s3://b/one"), Some(&secret("s"))),
            key(&storage("s3://other/one"), Some(&secret("s")))
        );
        assert_ne!(
            key(&storage("s3://b/one"), Some(&secret("s"))),
            key(&storage("s3://b/one"), Some(&secret("rotated")))
        );
        let mut elsewhere = storage("s3://b/one");
        elsewhere.region = "eu-west-1".into();
        assert_ne!(
            key(&storage("s3://b/one"), Some(&secret("s"))),
            key(&elsewhere, Some(&secret("s")))
        );
    }

    #[test]
    fn object_store_clients_are_per_bucket_and_identity() {
        assert_eq!(
            key(&storage("gs://b/one"), None),
            key(&storage("gs://b/two"), None)
        );
        assert_ne!(
            key(&storage("gs://b/one"), None),
            key(&storage("gs://other/one"), None)
        );
        assert_ne!(
            key(&storage("s3://b/one"), None),
            key(&storage("s3://b/one"), Some(&secret("s")))
        );
        assert_ne!(
            key(&storage("s3://b/one"), None),
            key(&storage("gs://b/one"), None)
        );
    }

    #[test]
    fn a_client_is_built_once_and_dropped_when_idle() {
        let resync = Duration::from_secs(60);
        let clients = BucketClients::new(Duration::from_secs(1), StoreEndpoints::default(), resync);
        let start = Instant::now();
        let built = std::cell::Cell::new(0);
        let build = |sk: &str| {
            built.set(built.get() + 1);
            StoreSource::new(
                &storage("s3://b/p"),
                Some(&secret(sk)),
                &StoreEndpoints::default(),
                Duration::from_secs(1),
            )
            .map(|c| Arc::new(c) as Client)
        };
        let live = HashMap::from([("a", "1"), ("b", "1")]);
        clients
            .get_or_build("k", "a", start, || build("s"))
            .unwrap();
        let later = start + resync + Duration::from_secs(1);
        clients
            .get_or_build("k", "b", later, || build("s"))
            .unwrap();
        assert_eq!(built.get(), 1, "a client in use is shared");
        clients
            .get_or_build("other", "a", later, || build("x"))
            .unwrap();
        assert_eq!(
            clients.drop_unused(later + resync, &live),
            2,
            "both used within two periods"
        );
        let unused = later + resync * 2;
        assert_eq!(
            clients.drop_unused(unused, &live),
            0,
            "nobody used them for two periods"
        );
        clients
            .get_or_build("k", "a", unused, || build("s"))
            .unwrap();
        assert_eq!(built.get(), 3, "a dropped client is built again when asked");
    }

    #[test]
    fn a_client_goes_with_the_last_of_its_fleets() {
        let clients = BucketClients::new(
            Duration::from_secs(1),
            StoreEndpoints::default(),
            Duration::from_secs(60),
        );
        let now = Instant::now();
        let build = || {
            StoreSource::new(
                &storage("s3://b/p"),
                Some(&secret("s")),
                &StoreEndpoints::default(),
                Duration::from_secs(1),
            )
            .map(|c| Arc::new(c) as Client)
        };
        for fleet in ["a", "b"] {
            clients.get_or_build("shared", fleet, now, build).unwrap();
        }
        clients.get_or_build("own", "c", now, build).unwrap();
        let live = |uids: &[&'static str]| {
            uids.iter()
                .map(|u| (*u, "1"))
                .collect::<HashMap<&str, &str>>()
        };
        assert_eq!(
            clients.drop_unused(now, &live(&["b", "c"])),
            2,
            "one of its fleets is left"
        );
        assert_eq!(
            clients.drop_unused(now, &live(&["a"])),
            0,
            "a, deleted before, was forgotten: b and c are gone now"
        );
    }
}
