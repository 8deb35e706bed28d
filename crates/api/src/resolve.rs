//! Storage resolution: where a fleet's nodes find their bucket, endpoint, region and
//! credentials. The operator and the plugin both call this, so a deploy writes exactly where the
//! nodes read.

use crate::bucket::{BadBucketUrl, BucketUrl};
use crate::fleet::StorageStatus;
use crate::labels::secret_keys;
use crate::{CelldFleetSpec, CelldObjectStore, CelldObjectStoreSpec};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

/// The region celld uses when none is given.
pub const DEFAULT_REGION: &str = "us-east-1";

/// A fleet's object storage, resolved. Holds the credentials Secret's name, never its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedStorage {
    /// The CelldObjectStore the connection came from, if any.
    pub store: Option<String>,
    /// Bucket and prefix.
    pub bucket: BucketUrl,
    /// Endpoint URL; None for AWS S3.
    pub endpoint: Option<String>,
    /// Region (us-east-1 unless set).
    pub region: String,
    /// Whether a plain-text endpoint is allowed.
    pub allow_http: bool,
    /// Name of the Secret with the credentials, in the fleet's namespace.
    pub credentials_secret: String,
}

/// Why a fleet's storage does not resolve. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// spec.storeRef names a store that does not exist.
    #[error(
        "CelldObjectStore '{name}' (spec.storeRef.name) does not exist in namespace '{namespace}': create it or fix spec.storeRef.name"
    )]
    StoreNotFound {
        /// The store's name.
        name: String,
        /// The fleet's namespace.
        namespace: String,
    },
    /// spec.storeRef names a store the API server holds but that does not match the schema
    /// this operator knows (written by a newer or older version).
    #[error(
        "CelldObjectStore '{name}' (spec.storeRef.name) does not match the schema this operator knows ({error}): fix the store, or run an operator of the version that wrote it"
    )]
    StoreInvalid {
        /// The store's name.
        name: String,
        /// Why it does not parse.
        error: String,
    },
    /// Neither storeRef nor inline credentials (admission refuses this; kept for old objects).
    #[error(
        "the fleet has no object-storage credentials: set spec.storeRef.name or spec.objectStorage.credentialsSecretRef.name"
    )]
    NoCredentials,
    /// The bucket is not s3://NAME[/PREFIX].
    #[error("spec.objectStorage.{0}")]
    Bucket(#[from] BadBucketUrl),
    /// The credentials Secret does not exist.
    #[error(
        "Secret '{name}' with the object-storage credentials does not exist in namespace '{namespace}': create it with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    )]
    SecretNotFound {
        /// The Secret's name.
        name: String,
        /// Its namespace.
        namespace: String,
    },
    /// The credentials Secret lacks a required key.
    #[error(
        "Secret '{name}' has no key {key}: add it (the Secret needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
    )]
    SecretKeyMissing {
        /// The Secret's name.
        name: String,
        /// The missing key.
        key: &'static str,
    },
    /// The API server could not be asked.
    #[error("reading {what} from the API server failed: {source}")]
    Api {
        /// What was being read.
        what: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}

impl ResolveError {
    /// A CamelCase reason for conditions and Events.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::StoreNotFound { .. } => "StoreNotFound",
            Self::StoreInvalid { .. } => "InvalidStore",
            Self::NoCredentials => "NoCredentials",
            Self::Bucket(_) => "InvalidBucket",
            Self::SecretNotFound { .. } => "SecretNotFound",
            Self::SecretKeyMissing { .. } => "SecretKeyMissing",
            Self::Api { .. } => "ApiError",
        }
    }
}

/// Resolves a fleet's storage from its spec and, when it has a storeRef, the referenced store.
/// Pure: the caller fetches the store.
pub fn resolve(
    spec: &CelldFleetSpec,
    namespace: &str,
    store: Option<&CelldObjectStore>,
) -> Result<ResolvedStorage, ResolveError> {
    let bucket = BucketUrl::parse(&spec.object_storage.bucket)?;
    match &spec.store_ref {
        Some(store_ref) => {
            let store = store
                .filter(|s| s.metadata.name.as_deref() == Some(store_ref.name.as_str()))
                .ok_or_else(|| ResolveError::StoreNotFound {
                    name: store_ref.name.clone(),
                    namespace: namespace.to_string(),
                })?;
            Ok(from_store(&store_ref.name, &store.spec, bucket))
        }
        None => {
            let os = &spec.object_storage;
            let secret = os
                .credentials_secret_ref
                .as_ref()
                .ok_or(ResolveError::NoCredentials)?;
            Ok(ResolvedStorage {
                store: None,
                bucket,
                endpoint: os.endpoint.clone(),
                region: os
                    .region
                    .clone()
                    .unwrap_or_else(|| DEFAULT_REGION.to_string()),
                allow_http: os.allow_http.unwrap_or(false),
                credentials_secret: secret.name.clone(),
            })
        }
    }
}

fn from_store(name: &str, store: &CelldObjectStoreSpec, bucket: BucketUrl) -> ResolvedStorage {
    ResolvedStorage {
        store: Some(name.to_string()),
        bucket,
        endpoint: store.endpoint.clone(),
        region: store
            .region
            .clone()
            .unwrap_or_else(|| DEFAULT_REGION.to_string()),
        allow_http: store.allow_http.unwrap_or(false),
        credentials_secret: store.credentials_secret_ref.name.clone(),
    }
}

/// Fetches the fleet's CelldObjectStore (when it has a storeRef) and resolves its storage.
pub async fn fetch(
    client: &Client,
    namespace: &str,
    spec: &CelldFleetSpec,
) -> Result<ResolvedStorage, ResolveError> {
    let store = match &spec.store_ref {
        Some(r) => Api::<CelldObjectStore>::namespaced(client.clone(), namespace)
            .get_opt(&r.name)
            .await
            .map_err(|source| ResolveError::Api {
                what: format!("CelldObjectStore '{}'", r.name),
                source: Box::new(source),
            })?,
        None => None,
    };
    resolve(spec, namespace, store.as_ref())
}

/// Checks that the credentials Secret exists and has the required keys.
pub fn check_secret(
    name: &str,
    namespace: &str,
    secret: Option<&Secret>,
) -> Result<(), ResolveError> {
    let secret = secret.ok_or_else(|| ResolveError::SecretNotFound {
        name: name.to_string(),
        namespace: namespace.to_string(),
    })?;
    for key in [secret_keys::ACCESS_KEY_ID, secret_keys::SECRET_ACCESS_KEY] {
        let in_data = secret.data.as_ref().is_some_and(|d| d.contains_key(key));
        let in_string_data = secret
            .string_data
            .as_ref()
            .is_some_and(|d| d.contains_key(key));
        if !in_data && !in_string_data {
            return Err(ResolveError::SecretKeyMissing {
                name: name.to_string(),
                key,
            });
        }
    }
    Ok(())
}

impl ResolvedStorage {
    /// The status form: names and locations only, never credentials.
    pub fn to_status(&self) -> StorageStatus {
        StorageStatus {
            store: self.store.clone(),
            bucket: self.bucket.to_string(),
            endpoint: self.endpoint.clone(),
            region: self.region.clone(),
            credentials_secret: self.credentials_secret.clone(),
        }
    }
}
