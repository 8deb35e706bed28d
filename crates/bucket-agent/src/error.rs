//! What stops `celld-bucket`, each message saying what happened, to which object, and what to
//! do.

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `CELLD_BUCKET` is not set.
    #[error(
        "CELLD_BUCKET is not set: celld-bucket runs in a deploy pod of a fleet, which has it; run it through kubectl celld history FLEET"
    )]
    NoBucket,

    /// `CELLD_BUCKET` is not a bucket URL.
    #[error(
        "CELLD_BUCKET '{0}' is not [s3://|gs://|az://]NAME[/PREFIX]: fix the fleet's spec.objectStorage.bucket"
    )]
    BadBucket(String),

    /// An az:// bucket without `AZURE_STORAGE_ACCOUNT_NAME`.
    #[error(
        "AZURE_STORAGE_ACCOUNT_NAME is not set for {bucket}: set azureStorageAccount on the fleet's objectStorage or its CelldObjectStore"
    )]
    NoAzureAccount {
        /// The bucket URL.
        bucket: String,
    },

    /// The store's client could not be built from the environment.
    #[error(
        "cannot set up the client of {bucket}: {source}; check the fleet's storage with: kubectl celld status FLEET"
    )]
    Client {
        /// The bucket URL.
        bucket: String,
        /// The client's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A request to the store failed.
    #[error("{action} {key} in {bucket} failed: {message}")]
    Request {
        /// What was being done (reading, listing, writing).
        action: &'static str,
        /// The full key.
        key: String,
        /// The bucket URL.
        bucket: String,
        /// What the store or the client said, with a hint when the cause is known.
        message: String,
    },

    /// Secrets could not be merged into the Worker's vars.
    #[error(transparent)]
    Vars(#[from] crate::vars::VarsError),

    /// A `--secret` is not NAME=DIR.
    #[error("--secret '{0}' is not NAME=DIR (the Secret's name and where it is mounted)")]
    SecretArg(String),
}
