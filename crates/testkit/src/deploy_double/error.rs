//! What can stop a deploy of the test double, each message saying what happened, to which
//! file or object, and what to do.

use std::path::PathBuf;

/// Why `celld-deploy-double deploy` failed.
#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    /// The project directory does not exist or is not a directory.
    #[error(
        "'{dir}' is not a directory: pass the Worker project directory (the one with wrangler.jsonc or wrangler.json)"
    )]
    NotADirectory {
        /// The path given.
        dir: PathBuf,
    },
    /// Neither wrangler.jsonc nor wrangler.json exists.
    #[error(
        "no wrangler.jsonc or wrangler.json in '{dir}' (wrangler.toml is not supported): add one with at least \"name\" and \"main\""
    )]
    NoConfig {
        /// The project directory.
        dir: PathBuf,
    },
    /// A file of the project could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The wrangler config is not valid JSON (after removing comments and trailing commas).
    #[error("{file} is not valid JSON with comments: {source}; fix the syntax")]
    ConfigSyntax {
        /// The config file.
        file: PathBuf,
        /// The parser's error (line and column).
        #[source]
        source: serde_json::Error,
    },
    /// The wrangler config is valid JSON but not usable.
    #[error("{file}: {problem}")]
    Config {
        /// The config file.
        file: PathBuf,
        /// What is wrong and what to do.
        problem: String,
    },
    /// The project has no module the test double would upload.
    #[error("'{dir}' has no JavaScript, TypeScript or WebAssembly module to upload")]
    NoModules {
        /// The project directory.
        dir: PathBuf,
    },
    /// `--bucket` is not usable.
    #[error("--bucket {value:?}: {problem}")]
    Bucket {
        /// The value given.
        value: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// `--endpoint` is missing or not a local S3 server.
    #[error("--endpoint {value:?}: {problem}")]
    Endpoint {
        /// The value given (empty when none).
        value: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// No credentials in the environment.
    #[error(
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (a deploy pod gets them from the fleet's credentials Secret; on the local control plane the kwok Exec rule passes them)"
    )]
    NoCredentials,
    /// An S3 request failed.
    #[error(
        "{action} s3://{bucket}/{key} at {endpoint} failed: {message}; check that the local S3 server runs (make cluster-up) and that the credentials are its own"
    )]
    S3 {
        /// What was being done ("uploading", "reading the ETag of", ...).
        action: &'static str,
        /// The bucket.
        bucket: String,
        /// The object key.
        key: String,
        /// The endpoint.
        endpoint: String,
        /// The SDK's error, with its context.
        message: String,
    },
    /// A compare-and-swap write of a pointer failed in a way that does not say whether the store
    /// applied it (a 5xx such as S3's `SlowDown`, a timeout, a lost connection); as celld, the
    /// double does not retry it.
    #[error(
        "writing {object} with compare-and-swap failed ({answer}): the write may have committed, so version {version} may or may not be live; celld deploy does not retry its conditional writes: run the deploy again (it is idempotent) to publish {version} ({message})"
    )]
    MayHaveCommitted {
        /// The pointer and where it was written: `s3://NAME/KEY at ENDPOINT`.
        object: String,
        /// The store's answer (`HTTP 503 SlowDown`), or `no answer`.
        answer: String,
        /// The SDK's error, with its context.
        message: String,
        /// The version this deploy tried to publish.
        version: String,
    },
    /// A request to a GCS or Azure Blob emulator failed.
    #[error("{message}")]
    Cloud {
        /// What celld-bucket's client said: the action, the key and the bucket.
        message: String,
    },
    /// A compare-and-swap write of a pointer lost against another writer.
    #[error(
        "another deploy changed {bucket}/{key} after this deploy read it ({expected}): version {version} was NOT made live by this run and the pointer keeps the other deploy's version; re-run the deploy to publish {version} on top of it"
    )]
    LostRace {
        /// The bucket, with its scheme (`s3://NAME`).
        bucket: String,
        /// The pointer's key.
        key: String,
        /// What this deploy expected ("ETag \"...\"" or "no object").
        expected: String,
        /// The version this deploy tried to publish.
        version: String,
    },
    /// The test seam's hold did not end.
    #[error(
        "held before writing {key} for {seconds}s and nobody created {release}: create that file to let the deploy go on (test seam {env})"
    )]
    HoldTimeout {
        /// The pointer about to be written.
        key: String,
        /// How long it waited.
        seconds: u64,
        /// The file that ends the hold.
        release: PathBuf,
        /// The environment variable that asked for the hold.
        env: &'static str,
    },
    /// The test seam's marker file could not be written.
    #[error("cannot write the hold marker {path} (test seam {env}): {source}")]
    Hold {
        /// The marker file.
        path: PathBuf,
        /// The environment variable that asked for the hold.
        env: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}
