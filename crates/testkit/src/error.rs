//! The one error type of the test kit.

use std::path::PathBuf;
use std::time::Duration;

/// Result of the test kit's operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong while talking to the local control plane. Every message says what to do.
///
/// `Debug` prints the message (which includes its cause), so a test returning `Result` fails
/// readably.
#[derive(thiserror::Error)]
pub enum Error {
    /// A file up.sh writes (kubeconfig, s3.env) does not exist: the control plane is not up.
    #[error(
        "{path} does not exist: the local control plane is not running; run `make cluster-up` \
         (or `bash testenv/scripts/up.sh`) first"
    )]
    NotRunning {
        /// The missing file.
        path: PathBuf,
    },
    /// A component of the local control plane that a test needs does not run there (its
    /// settings file, written by up.sh, does not exist).
    #[error(
        "the local control plane runs no {what} ({path} does not exist): run `make cluster-up` \
         (a control plane started with CELLD_TESTENV_FLUX=0, such as `make cluster-up-bare`, \
         runs no Flux)"
    )]
    NotServed {
        /// The component ("Flux source-controller", "OCI registry").
        what: &'static str,
        /// The missing settings file.
        path: PathBuf,
    },
    /// The kubeconfig exists but cannot be read or used.
    #[error("cannot use the kubeconfig at {path}: {source}")]
    Kubeconfig {
        /// The kubeconfig's path.
        path: PathBuf,
        /// Why it could not be used.
        #[source]
        source: Box<kube::config::KubeconfigError>,
    },
    /// A request to the API server failed.
    #[error("{context}: {source}")]
    Kube {
        /// What was being done.
        context: String,
        /// The client's error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A file of the test environment could not be read or written.
    #[error("{context} ({path}): {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `.testenv/s3.env` lacks a setting.
    #[error("{path} has no {key}; re-run `make cluster-up`")]
    S3Setting {
        /// The env file.
        path: PathBuf,
        /// The missing key.
        key: &'static str,
    },
    /// `.testenv/gcs.env` or `.testenv/azure.env` lacks a setting.
    #[error("{path} has no {key}; re-run `make cluster-up`")]
    EmulatorSetting {
        /// The env file.
        path: PathBuf,
        /// The missing key.
        key: &'static str,
    },
    /// A request to the GCS or Azure Blob emulator of the local control plane failed.
    #[error("{action} {url} on the local emulator failed: {message}; is it up (make cluster-up)?")]
    Emulator {
        /// What was being done ("writing").
        action: &'static str,
        /// The object's URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// A request to the S3 server of the local control plane failed.
    #[error(
        "{action} s3://{bucket}/{key} on the local S3 server failed: {message}; is it up (make cluster-up)?"
    )]
    S3 {
        /// What was being done ("reading", "writing").
        action: &'static str,
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
        /// The SDK's error with its context.
        message: String,
    },
    /// A tool of the local control plane (`oci-registry push`) failed.
    #[error("`{command}` failed: {message}")]
    Tool {
        /// The command line.
        command: String,
        /// What went wrong.
        message: String,
    },
    /// An HTTP request to a server of the local control plane failed.
    #[error("GET {url} failed: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// kubectl could not be started.
    #[error("cannot run {path} (is the local control plane up? run `make cluster-up`): {source}")]
    KubectlSpawn {
        /// The kubectl binary.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// kubectl ran and exited non-zero.
    #[error("`kubectl {args}` exited with {status}; stderr: {stderr}")]
    KubectlFailed {
        /// The arguments, joined by spaces.
        args: String,
        /// The exit status.
        status: std::process::ExitStatus,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A condition did not hold within its timeout.
    #[error("timed out after {timeout:?} waiting for {what}; last observed: {last_observed}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// How long.
        timeout: Duration,
        /// The state seen on the last check.
        last_observed: String,
    },
    /// A deploy pod's environment cannot be resolved as the kubelet would.
    #[error("pod {namespace}/{pod}: environment variable {var}: {problem}")]
    PodEnv {
        /// The pod's namespace.
        namespace: String,
        /// The pod.
        pod: String,
        /// The variable.
        var: String,
        /// What is wrong (the real pod would not start either).
        problem: String,
    },
    /// A Secret volume of a pod cannot be laid out as the kubelet would mount it.
    #[error("pod {namespace}/{pod}, volume {volume}: {problem}")]
    PodVolume {
        /// The pod's namespace.
        namespace: String,
        /// The pod.
        pod: String,
        /// The volume.
        volume: String,
        /// What is wrong (the real pod would not start either).
        problem: String,
    },
    /// Building a workspace binary failed.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// A name handed to the kit is unusable (for example an exec shim named like a system tool).
    #[error("invalid {what} {value:?}: {reason}")]
    Invalid {
        /// What kind of value.
        what: &'static str,
        /// The value.
        value: String,
        /// Why it is refused.
        reason: &'static str,
    },
}

/// Errors of workspace binaries the kit builds (the operator, the deploy double).
#[derive(thiserror::Error)]
pub enum ProcessError {
    /// `cargo build` of a workspace binary failed.
    #[error(
        "building {bin} failed ({command}): {reason}; run that command in the workspace to see why"
    )]
    Build {
        /// The binary.
        bin: String,
        /// The cargo command line.
        command: String,
        /// What went wrong (cargo's exit status and last output, or why it could not start).
        reason: String,
    },
}

impl std::fmt::Debug for ProcessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The messages already include their cause.
        write!(f, "{self}")
    }
}

impl Error {
    /// Wraps a kube client error with what was being done.
    pub fn kube(context: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            context: context.into(),
            source: Box::new(source),
        }
    }

    /// Wraps an I/O error with what was being done and the file concerned.
    pub fn io(context: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            context,
            path: path.into(),
            source,
        }
    }

    /// The HTTP status code of a failed API request, if this is one (403 for a refused request).
    pub fn api_status(&self) -> Option<u16> {
        match self {
            Error::Kube { source, .. } => match source.as_ref() {
                kube::Error::Api(status) => Some(status.code),
                _ => None,
            },
            _ => None,
        }
    }
}
