//! The contents of credentials Secrets, read from the API server once per resourceVersion: the
//! Secret watch keeps only metadata, and a Secret whose resourceVersion did not move since its
//! last read is not read again. Only the keys celld uses are kept in memory.

use celld_api::labels::secret_keys;
use k8s_openapi::api::core::v1::Secret;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, ResourceExt};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The keys of a credentials Secret the operator reads, for every object store.
const KEPT: [&str; 5] = [
    secret_keys::ACCESS_KEY_ID,
    secret_keys::SECRET_ACCESS_KEY,
    secret_keys::SESSION_TOKEN,
    secret_keys::GOOGLE_SERVICE_ACCOUNT_KEY,
    secret_keys::AZURE_STORAGE_ACCOUNT_KEY,
];

/// Secret contents by uid, with the resourceVersion they were read at.
pub struct SecretContents {
    /// The metadata cache: Secrets no longer in it are forgotten.
    cache: Store<PartialObjectMeta<Secret>>,
    read: Mutex<HashMap<String, (String, Arc<Secret>)>>,
}

/// `secret` with only its name, namespace, resourceVersion and the keys celld uses.
fn trimmed(secret: Secret) -> Secret {
    // stringData is write-only: the API server never returns it.
    let data = secret.data.map(|m| {
        m.into_iter()
            .filter(|(k, _)| KEPT.contains(&k.as_str()))
            .collect::<BTreeMap<_, _>>()
    });
    Secret {
        metadata: kube::api::ObjectMeta {
            name: secret.metadata.name,
            namespace: secret.metadata.namespace,
            uid: secret.metadata.uid,
            resource_version: secret.metadata.resource_version,
            ..Default::default()
        },
        data,
        ..Secret::default()
    }
}

impl SecretContents {
    /// Contents of the Secrets in `cache`.
    pub fn new(cache: Store<PartialObjectMeta<Secret>>) -> Self {
        Self {
            cache,
            read: Mutex::new(HashMap::new()),
        }
    }

    /// The Secret `name` of `ns`: from its metadata in the cache, the contents read before when
    /// its resourceVersion is the same, otherwise read now; a Secret the cache does not hold
    /// (yet) is read from the API server, so one created together with its fleet is not taken
    /// for missing. None when it does not exist.
    pub async fn named(
        &self,
        client: &Client,
        ns: &str,
        name: &str,
    ) -> Result<Option<Arc<Secret>>, kube::Error> {
        match self.cache.get(&ObjectRef::new(name).within(ns)) {
            Some(meta) => self.get(client, &meta).await,
            None => self.read(client, ns, name).await,
        }
    }

    /// The Secret described by `meta` (from the metadata cache): the contents read before when
    /// its resourceVersion is the same, otherwise read now. None when it no longer exists.
    async fn get(
        &self,
        client: &Client,
        meta: &PartialObjectMeta<Secret>,
    ) -> Result<Option<Arc<Secret>>, kube::Error> {
        let uid = meta.uid().unwrap_or_default();
        let version = meta.resource_version().unwrap_or_default();
        if let Some(known) = self.known(&uid, &version) {
            return Ok(Some(known));
        }
        let ns = meta.namespace().unwrap_or_default();
        let Some(secret) = Api::<Secret>::namespaced(client.clone(), &ns)
            .get_opt(&meta.name_any())
            .await?
        else {
            return Ok(None);
        };
        Ok(Some(self.remember(secret)))
    }

    /// Reads the Secret `name` of `ns` from the API server (for a Secret the cache does not
    /// hold yet) and remembers it.
    async fn read(
        &self,
        client: &Client,
        ns: &str,
        name: &str,
    ) -> Result<Option<Arc<Secret>>, kube::Error> {
        let secret = Api::<Secret>::namespaced(client.clone(), ns)
            .get_opt(name)
            .await?;
        Ok(secret.map(|s| self.remember(s)))
    }

    fn known(&self, uid: &str, version: &str) -> Option<Arc<Secret>> {
        let read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        read.get(uid)
            .filter(|(v, _)| v == version)
            .map(|(_, s)| s.clone())
    }

    fn remember(&self, secret: Secret) -> Arc<Secret> {
        let uid = secret.uid().unwrap_or_default();
        let version = secret.resource_version().unwrap_or_default();
        let secret = Arc::new(trimmed(secret));
        self.forget_deleted();
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        read.insert(uid, (version, secret.clone()));
        secret
    }

    /// Forgets the contents of Secrets the metadata cache no longer holds (deleted ones): on
    /// every read, and in each housekeeping round, so no credentials outlive their Secret.
    pub fn forget_deleted(&self) {
        let secrets = self.cache.state();
        let live: HashSet<&str> = secrets
            .iter()
            .filter_map(|m| m.metadata.uid.as_deref())
            .collect();
        let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
        crate::map_retain::retain(&mut read, |uid, _| live.contains(uid.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn secret(uid: &str, rv: &str, sk: &str) -> Secret {
        Secret {
            metadata: kube::api::ObjectMeta {
                name: Some("creds".into()),
                namespace: Some("ns".into()),
                uid: Some(uid.into()),
                resource_version: Some(rv.into()),
                annotations: Some(BTreeMap::from([("a".into(), "b".into())])),
                ..Default::default()
            },
            data: Some(BTreeMap::from([
                (
                    secret_keys::ACCESS_KEY_ID.into(),
                    ByteString(b"AK".to_vec()),
                ),
                (
                    secret_keys::SECRET_ACCESS_KEY.into(),
                    ByteString(sk.as_bytes().to_vec()),
                ),
                ("tls.key".into(), ByteString(b"unrelated".to_vec())),
            ])),
            ..Secret::default()
        }
    }

    #[test]
    fn only_the_keys_celld_uses_are_kept() {
        let kept = trimmed(secret("u", "1", "SK"));
        let keys: Vec<&String> = kept.data.as_ref().unwrap().keys().collect();
        assert_eq!(
            keys,
            [secret_keys::ACCESS_KEY_ID, secret_keys::SECRET_ACCESS_KEY]
        );
        assert!(kept.metadata.annotations.is_none());
        assert_eq!(kept.metadata.resource_version.as_deref(), Some("1"));
    }

    #[test]
    fn contents_are_reused_only_at_the_same_resource_version() {
        let (cache, _writer) = kube::runtime::reflector::store();
        let contents = SecretContents::new(cache);
        contents.remember(secret("u", "1", "one"));
        assert!(contents.known("u", "1").is_some());
        assert!(contents.known("u", "2").is_none(), "rotated: read again");
        assert!(contents.known("other", "1").is_none());
        contents.remember(secret("u", "2", "two"));
        let two = contents.known("u", "2").unwrap();
        assert_eq!(
            two.data.as_ref().unwrap()[secret_keys::SECRET_ACCESS_KEY].0,
            b"two"
        );
        contents.remember(secret("v", "1", "three"));
        assert!(
            contents.known("u", "2").is_none(),
            "a Secret no longer cached is forgotten"
        );
    }

    fn meta(uid: &str) -> PartialObjectMeta<Secret> {
        let mut m = PartialObjectMeta::<Secret>::default();
        m.metadata.name = Some(format!("creds-{uid}"));
        m.metadata.namespace = Some("ns".into());
        m.metadata.uid = Some(uid.into());
        m
    }

    #[test]
    fn a_deleted_secret_is_forgotten_without_another_read() {
        use kube::runtime::watcher::Event;
        let (cache, mut writer) = kube::runtime::reflector::store();
        writer.apply_watcher_event(&Event::Apply(meta("u")));
        let contents = SecretContents::new(cache);
        contents.remember(secret("u", "1", "one"));
        contents.forget_deleted();
        assert!(contents.known("u", "1").is_some(), "still in the cache");
        writer.apply_watcher_event(&Event::Delete(meta("u")));
        contents.forget_deleted();
        assert!(contents.known("u", "1").is_none());
    }
}
