//! Storage resolution: where a fleet's nodes find their bucket, its connection (S3 endpoint and
//! region, Azure storage account) and credentials (a Secret, or their workload identity). The
//! operator and the plugin both call this, so a deploy writes exactly where the nodes read.

use crate::bucket::{BadBucketUrl, BucketUrl, Scheme};
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
    /// Bucket and prefix; its scheme says which object store.
    pub bucket: BucketUrl,
    /// Endpoint URL (S3 only); None for AWS S3.
    pub endpoint: Option<String>,
    /// Region (S3 only; us-east-1 unless set).
    pub region: String,
    /// Whether a plain-text endpoint is allowed (S3 only).
    pub allow_http: bool,
    /// The Azure storage account holding an az:// bucket's container.
    pub azure_storage_account: Option<String>,
    /// Name of the Secret with the credentials, in the fleet's namespace; None when the nodes
    /// use their workload identity.
    pub credentials_secret: Option<String>,
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
    /// The connection does not fit the bucket's object store (an S3 endpoint for a gs://
    /// bucket, an az:// bucket without a storage account...).
    #[error("{via} does not fit bucket {bucket}: {problem}")]
    Mismatch {
        /// Where the connection comes from, such as `CelldObjectStore 's3' (spec.storeRef.name)`.
        via: String,
        /// The fleet's bucket.
        bucket: String,
        /// What does not fit, and the fix.
        problem: String,
    },
    /// The S3 endpoint passes the schema's pattern but is no URL an object-store client
    /// accepts (a host such as 10.0.0.300 that reads as an IPv4 address and is not one).
    #[error(
        "{via} sets {field} '{endpoint}', which is not a valid URL ({error}): use an absolute http:// or https:// URL whose host is a valid name or IP address, such as https://s3.example.com"
    )]
    Endpoint {
        /// Where the connection comes from, such as `CelldObjectStore 's3' (spec.storeRef.name)`.
        via: String,
        /// The field holding the endpoint, such as `spec.objectStorage.endpoint`.
        field: String,
        /// The endpoint.
        endpoint: String,
        /// Why it does not parse.
        error: String,
    },
    /// The bucket is not [s3://|gs://|az://]NAME[/PREFIX].
    #[error("spec.objectStorage.{0}")]
    Bucket(#[from] BadBucketUrl),
    /// The credentials Secret does not exist.
    #[error(
        "Secret '{name}' with the object-storage credentials does not exist in namespace '{namespace}': create it with {needs}, or remove credentialsSecretRef to use workload identity"
    )]
    SecretNotFound {
        /// The Secret's name.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The keys it needs, from [`needed_keys`].
        needs: String,
    },
    /// The credentials Secret lacks a required key.
    #[error("Secret '{name}' has no {missing}: add it")]
    SecretKeyMissing {
        /// The Secret's name.
        name: String,
        /// What is missing, from [`needed_keys`].
        missing: String,
    },
    /// The bucket prefix equals, contains or lies inside the prefix of a fleet created before
    /// this one (in any namespace, on the same bucket of the same store): its nodes would read
    /// and write that fleet's deployments and state. The message names no other fleet.
    #[error(
        "the bucket prefix {bucket} equals, contains or lies inside the prefix of another fleet created before this one, which keeps it: give this fleet a prefix of its own in spec.objectStorage.bucket (for example one starting with its namespace, {example})"
    )]
    PrefixClaimed {
        /// This fleet's bucket URL.
        bucket: String,
        /// A prefix of its own to suggest.
        example: String,
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
            Self::Mismatch { .. } => "ConnectionMismatch",
            Self::Endpoint { .. } => "InvalidEndpoint",
            Self::Bucket(_) => "InvalidBucket",
            Self::SecretNotFound { .. } => "SecretNotFound",
            Self::SecretKeyMissing { .. } => "SecretKeyMissing",
            Self::PrefixClaimed { .. } => "PrefixClaimed",
            Self::Api { .. } => "ApiError",
        }
    }
}

/// The keys a credentials Secret needs for buckets of `scheme`; the optional ones are not
/// listed.
pub fn required_keys(scheme: Scheme) -> &'static [&'static str] {
    match scheme {
        Scheme::S3 => &[secret_keys::ACCESS_KEY_ID, secret_keys::SECRET_ACCESS_KEY],
        Scheme::Gcs => &[secret_keys::GOOGLE_SERVICE_ACCOUNT_KEY],
        Scheme::Azure => &[secret_keys::AZURE_STORAGE_ACCOUNT_KEY],
    }
}

/// The keys a credentials Secret needs for any of `schemes`, for messages: `keys
/// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (S3)` or several such sets joined by `or`.
pub fn needed_keys(schemes: &[Scheme]) -> String {
    schemes
        .iter()
        .map(|s| {
            let keys = required_keys(*s);
            let noun = if keys.len() == 1 { "key" } else { "keys" };
            format!("{noun} {} ({})", keys.join(" and "), s.store_name())
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Resolves a fleet's storage from its spec and, when it has a storeRef, the referenced store.
/// Pure: the caller fetches the store.
pub fn resolve(
    spec: &CelldFleetSpec,
    namespace: &str,
    store: Option<&CelldObjectStore>,
) -> Result<ResolvedStorage, ResolveError> {
    let bucket = BucketUrl::parse(&spec.object_storage.bucket)?;
    let (resolved, region_given) = match &spec.store_ref {
        Some(store_ref) => {
            let store = store
                .filter(|s| s.metadata.name.as_deref() == Some(store_ref.name.as_str()))
                .ok_or_else(|| ResolveError::StoreNotFound {
                    name: store_ref.name.clone(),
                    namespace: namespace.to_string(),
                })?;
            (
                from_store(&store_ref.name, &store.spec, bucket),
                store.spec.region.is_some(),
            )
        }
        None => {
            let os = &spec.object_storage;
            let resolved = ResolvedStorage {
                store: None,
                bucket,
                endpoint: os.endpoint.clone(),
                region: os
                    .region
                    .clone()
                    .unwrap_or_else(|| DEFAULT_REGION.to_string()),
                allow_http: os.allow_http.unwrap_or(false),
                azure_storage_account: os.azure_storage_account.clone(),
                credentials_secret: os.credentials_secret_ref.as_ref().map(|r| r.name.clone()),
            };
            (resolved, os.region.is_some())
        }
    };
    let via = match &resolved.store {
        Some(name) => format!("CelldObjectStore '{name}' (spec.storeRef.name)"),
        None => "spec.objectStorage".to_string(),
    };
    let field = match &resolved.store {
        Some(_) => "spec.",
        None => "spec.objectStorage.",
    };
    let s3_only = [
        ("endpoint", resolved.endpoint.is_some()),
        ("region", region_given),
        ("allowHTTP", resolved.allow_http),
    ];
    let problem = match resolved.bucket.scheme {
        Scheme::Gcs | Scheme::Azure => s3_only.iter().find(|(_, set)| *set).map(|(name, _)| {
            format!("it sets {field}{name}, which celld allows for S3 buckets only: remove it, or use a connection without it for gs:// and az:// buckets")
        }),
        Scheme::S3 => None,
    }
    .or_else(|| match (resolved.bucket.scheme, &resolved.azure_storage_account) {
        (Scheme::Azure, None) => Some(format!(
            "an az:// bucket needs {field}azureStorageAccount, the Azure storage account holding its container: set it"
        )),
        (Scheme::S3 | Scheme::Gcs, Some(_)) => Some(format!(
            "it sets {field}azureStorageAccount, an Azure Blob Storage connection, and the bucket is not az://: use an az:// bucket, or a connection without azureStorageAccount"
        )),
        _ => None,
    });
    if let Some(problem) = problem {
        return Err(ResolveError::Mismatch {
            via,
            bucket: resolved.bucket.to_string(),
            problem,
        });
    }
    if let Some(endpoint) = &resolved.endpoint
        && let Err(e) = url::Url::parse(endpoint)
    {
        return Err(ResolveError::Endpoint {
            via,
            field: format!("{field}endpoint"),
            endpoint: endpoint.clone(),
            error: e.to_string(),
        });
    }
    Ok(resolved)
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
        azure_storage_account: store.azure_storage_account.clone(),
        credentials_secret: store
            .credentials_secret_ref
            .as_ref()
            .map(|r| r.name.clone()),
    }
}

/// The object stores a CelldObjectStore can serve, from the fields it sets: Azure with a storage
/// account, S3 with an endpoint, region or allowHTTP, otherwise S3 or GCS (each fleet's bucket
/// says which).
pub fn store_schemes(store: &CelldObjectStoreSpec) -> &'static [Scheme] {
    if store.azure_storage_account.is_some() {
        &[Scheme::Azure]
    } else if store.endpoint.is_some() || store.region.is_some() || store.allow_http.is_some() {
        &[Scheme::S3]
    } else {
        &[Scheme::S3, Scheme::Gcs]
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

/// Checks that the credentials Secret exists and has the keys of one of `schemes` (the bucket's
/// scheme for a fleet, [`store_schemes`] for a store); returns the first scheme it has every
/// key of.
pub fn check_secret(
    name: &str,
    namespace: &str,
    secret: Option<&Secret>,
    schemes: &[Scheme],
) -> Result<Scheme, ResolveError> {
    let secret = secret.ok_or_else(|| ResolveError::SecretNotFound {
        name: name.to_string(),
        namespace: namespace.to_string(),
        needs: needed_keys(schemes),
    })?;
    let has = |key: &str| {
        secret.data.as_ref().is_some_and(|d| d.contains_key(key))
            || secret
                .string_data
                .as_ref()
                .is_some_and(|d| d.contains_key(key))
    };
    let complete = |s: &&Scheme| required_keys(**s).iter().all(|k| has(k));
    if let Some(scheme) = schemes.iter().find(complete) {
        return Ok(*scheme);
    }
    let missing = match schemes {
        [one] => {
            let key = required_keys(*one)
                .iter()
                .find(|k| !has(k))
                .copied()
                .unwrap_or_default();
            format!(
                "key {key} (a Secret for {} buckets needs {})",
                one.store_name(),
                required_keys(*one).join(" and ")
            )
        }
        _ => needed_keys(schemes),
    };
    Err(ResolveError::SecretKeyMissing {
        name: name.to_string(),
        missing,
    })
}

impl ResolvedStorage {
    /// The status form: names and locations only, never credentials.
    pub fn to_status(&self) -> StorageStatus {
        StorageStatus {
            store: self.store.clone(),
            bucket: self.bucket.to_string(),
            endpoint: self.endpoint.clone(),
            region: (self.bucket.scheme == Scheme::S3).then(|| self.region.clone()),
            azure_storage_account: self.azure_storage_account.clone(),
            credentials_secret: self.credentials_secret.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SecretRef;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    fn store(spec: CelldObjectStoreSpec) -> CelldObjectStore {
        let mut store = CelldObjectStore::new("shared", spec);
        store.metadata.namespace = Some("apps".into());
        store
    }

    fn on_store(bucket: &str) -> CelldFleetSpec {
        let mut spec = CelldFleetSpec::with_bucket(bucket);
        spec.store_ref = Some(crate::StoreRef {
            name: "shared".into(),
        });
        spec
    }

    fn empty_store() -> CelldObjectStoreSpec {
        CelldObjectStoreSpec {
            endpoint: None,
            region: None,
            allow_http: None,
            azure_storage_account: None,
            credentials_secret_ref: None,
        }
    }

    #[test]
    fn workload_identity_resolves_without_a_secret() {
        let r = resolve(&CelldFleetSpec::with_bucket("gs://b/web"), "apps", None).unwrap();
        assert_eq!(r.credentials_secret, None);
        let status = r.to_status();
        assert_eq!((status.region, status.credentials_secret), (None, None));
    }

    #[test]
    fn a_store_that_does_not_fit_the_bucket_names_the_field() {
        let s3_store = store(CelldObjectStoreSpec {
            endpoint: Some("https://s3.example.com".into()),
            ..empty_store()
        });
        let e = resolve(&on_store("gs://b/web"), "apps", Some(&s3_store)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "CelldObjectStore 'shared' (spec.storeRef.name) does not fit bucket gs://b/web: it sets spec.endpoint, which celld allows for S3 buckets only: remove it, or use a connection without it for gs:// and az:// buckets"
        );
        assert_eq!(e.reason(), "ConnectionMismatch");
        let e = resolve(&on_store("az://c/web"), "apps", Some(&store(empty_store()))).unwrap_err();
        assert!(
            e.to_string().contains("needs spec.azureStorageAccount"),
            "{e}"
        );
        let azure = store(CelldObjectStoreSpec {
            azure_storage_account: Some("acct".into()),
            credentials_secret_ref: Some(SecretRef { name: "k".into() }),
            ..empty_store()
        });
        let r = resolve(&on_store("az://c/web"), "apps", Some(&azure)).unwrap();
        assert_eq!(r.azure_storage_account.as_deref(), Some("acct"));
        assert!(resolve(&on_store("s3://b/web"), "apps", Some(&azure)).is_err());
    }

    #[test]
    fn an_endpoint_no_client_accepts_names_its_field() {
        let mut inline = CelldFleetSpec::with_bucket("s3://b/web");
        inline.object_storage.endpoint = Some("http://10.0.0.300:9000".into());
        let e = resolve(&inline, "apps", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "spec.objectStorage sets spec.objectStorage.endpoint 'http://10.0.0.300:9000', which is not a valid URL (invalid IPv4 address): use an absolute http:// or https:// URL whose host is a valid name or IP address, such as https://s3.example.com"
        );
        assert_eq!(e.reason(), "InvalidEndpoint");
        let shared = store(CelldObjectStoreSpec {
            endpoint: Some("https://s3.1".into()),
            ..empty_store()
        });
        let e = resolve(&on_store("s3://b/web"), "apps", Some(&shared)).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "CelldObjectStore 'shared' (spec.storeRef.name) sets spec.endpoint 'https://s3.1'"
            ),
            "{e}"
        );
        inline.object_storage.endpoint = Some("http://127.0.0.1:9000/minio".into());
        assert!(resolve(&inline, "apps", None).is_ok());
    }

    #[test]
    fn the_secret_needs_the_keys_of_the_bucket_store() {
        let secret = |keys: &[&str]| Secret {
            data: Some(
                keys.iter()
                    .map(|k| (k.to_string(), ByteString(b"v".to_vec())))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..Secret::default()
        };
        let gcs = secret(&[secret_keys::GOOGLE_SERVICE_ACCOUNT_KEY]);
        assert_eq!(
            check_secret("k", "apps", Some(&gcs), &[Scheme::S3, Scheme::Gcs]).unwrap(),
            Scheme::Gcs
        );
        let e = check_secret("k", "apps", Some(&gcs), &[Scheme::Azure]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Secret 'k' has no key AZURE_STORAGE_ACCOUNT_KEY (a Secret for Azure Blob Storage buckets needs AZURE_STORAGE_ACCOUNT_KEY): add it"
        );
        let e = check_secret("k", "apps", None, &[Scheme::S3]).unwrap_err();
        assert!(
            e.to_string()
                .contains("create it with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (S3)"),
            "{e}"
        );
    }
}
