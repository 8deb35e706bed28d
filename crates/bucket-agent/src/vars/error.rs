//! What stops a merge of Secrets into a Worker's `vars`: each message names the Secret, the key
//! and the fix, and never a value.

use super::limits::{MAX_TOTAL_BYTES, MAX_VALUE_BYTES};

/// Why Secrets cannot become the Worker's `vars`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VarsError {
    /// A key is not a name a Worker can read as `env.NAME`.
    #[error(
        "Secret {secret} has key '{key}', which is not a valid vars name (letters, digits and '_', not starting with a digit): rename the key in the Secret, for example to {suggestion}"
    )]
    BadName {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
        /// A valid name close to it.
        suggestion: String,
    },

    /// A value is not UTF-8 text (a var is a JSON string).
    #[error(
        "Secret {secret} key {key}: the value is not UTF-8 text, and a var is a string: store it as text (for example base64-encoded) in the Secret"
    )]
    NotText {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
    },

    /// A value is larger than [`MAX_VALUE_BYTES`].
    #[error(
        "Secret {secret} key {key}: the value is {size} bytes, more than the {MAX_VALUE_BYTES} bytes a var may hold: keep large data in the bucket or a KV store and put only a reference in the Secret"
    )]
    ValueTooLarge {
        /// The Secret.
        secret: String,
        /// The key.
        key: String,
        /// The value's size in bytes.
        size: usize,
    },

    /// All the Worker's vars together are larger than [`MAX_TOTAL_BYTES`].
    #[error(
        "the Worker's vars would be {size} bytes with Secret {secret}, more than the {MAX_TOTAL_BYTES} bytes allowed: remove keys from the Secrets or from the vars of the wrangler config"
    )]
    TotalTooLarge {
        /// The Secret whose keys went over the bound.
        secret: String,
        /// The total size in bytes.
        size: usize,
    },

    /// Two Secrets hold the same key.
    #[error(
        "key {key} is in both Secret {first} and Secret {second}: the vars would depend on the order of the flags; remove the key from one of them"
    )]
    TwoSecrets {
        /// The key.
        key: String,
        /// The Secret named first.
        first: String,
        /// The Secret named later.
        second: String,
    },

    /// A Secret has no key in `.data`.
    #[error(
        "Secret {secret} has no keys in .data: add the Worker's vars to it (kubectl create secret generic {secret} --from-literal=NAME=VALUE), or drop --vars-from-secret {secret}"
    )]
    Empty {
        /// The Secret.
        secret: String,
    },

    /// The wrangler config is not JSON (after removing JSONC comments and trailing commas).
    #[error(
        "{file}: not valid JSON or JSONC ({message}): fix the file; vars from Secrets are merged into it"
    )]
    ConfigSyntax {
        /// The config file.
        file: String,
        /// serde_json's message (position only, the file holds no Secret value).
        message: String,
    },

    /// The wrangler config or its `vars` is not an object.
    #[error(
        "{file}: {problem}: fix the file; vars from Secrets are merged into its \"vars\" object"
    )]
    ConfigShape {
        /// The config file.
        file: String,
        /// What is wrong.
        problem: &'static str,
    },

    /// No wrangler config in the project directory.
    #[error(
        "{dir} has no wrangler.jsonc or wrangler.json: celld deploy needs one, and vars from Secrets are merged into it"
    )]
    NoConfig {
        /// The project directory.
        dir: String,
    },

    /// A file could not be read or written.
    #[error(
        "{action} {path} failed: {message}; check the deploy pod's volumes and working directory"
    )]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: String,
        /// The I/O error.
        message: String,
    },
}
