//! What can go wrong while measuring, each saying what happened and what to do.

use std::path::PathBuf;

/// Why the bench could not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operator binary was not given.
    #[error("set CELLD_OPERATOR_BIN to a release build of celld-operator (`make bench` does)")]
    NoOperator,
    /// The plugin binary was not given.
    #[error("set CELLD_PLUGIN_BIN to a release build of kubectl-celld (`make bench` does)")]
    NoPlugin,
    /// `--nodes` gives fewer fake nodes than the pods need.
    #[error(
        "--nodes {nodes} is too few for {fleets} fleets: their pods need at least {needed} fake nodes of {per_node} pods each; give more or leave --nodes out to calibrate",
        per_node = crate::settings::PODS_PER_NODE
    )]
    TooFewNodes {
        /// The fake nodes given.
        nodes: usize,
        /// The largest fleet count.
        fleets: usize,
        /// The fewest fake nodes its pods fit on.
        needed: usize,
    },
    /// A start-up probe exited with a failure.
    #[error("`{command}` failed ({status}): run it by hand to see why")]
    Probe {
        /// The command line.
        command: String,
        /// How it exited.
        status: String,
    },
    /// The local control plane kit failed (up.sh, CRDs, S3...).
    #[error(transparent)]
    Testkit(#[from] celld_testkit::Error),
    /// A fixture failed: the operator process, the credentials Secret.
    #[error(transparent)]
    Fixtures(#[from] celld_fixtures::Error),
    /// An API request failed.
    #[error("{what}: {source}")]
    Kube {
        /// What was being done.
        what: String,
        /// The client's error.
        #[source]
        source: Box<kube::Error>,
    },
    /// A file could not be read or written.
    #[error("{what} ({path}): {source}; check the path and the disk space")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A process (up.sh, down.sh, the operator) failed.
    #[error("{what} failed: {detail}")]
    Process {
        /// Which process.
        what: String,
        /// Its exit status and the end of its output.
        detail: String,
    },
    /// Something did not happen in time.
    #[error(
        "{what} did not happen within {seconds} s (last seen: {seen}); see the logs under {logs}"
    )]
    Timeout {
        /// What was awaited.
        what: String,
        /// The time allowed.
        seconds: u64,
        /// The last observed state.
        seen: String,
        /// Where the control plane's and the operator's logs are kept.
        logs: PathBuf,
    },
    /// A manifest the bench builds or reads could not be turned into an object.
    #[error(
        "{what} is not a valid object: {detail}; run `make manifests` if it is a generated file"
    )]
    Manifest {
        /// Which manifest.
        what: String,
        /// The parser's message.
        detail: String,
    },
    /// The floor could not read what its status reports: a fleet's deployment pointer in its
    /// bucket, or a node's state.
    #[error(
        "the floor could not read {what}: {detail}; the bench published a deployment for every fleet before creating it, and its stand-in for the nodes' API serves that version"
    )]
    FloorRead {
        /// What was read.
        what: String,
        /// Why it failed.
        detail: String,
    },
    /// A run failed, and this is what the control plane looked like then.
    #[error(
        "{what} failed: {source}\n  the control plane then: {health}.\n  Its logs are kept in {logs}"
    )]
    GaveOut {
        /// The run.
        what: String,
        /// What the bench saw fail.
        #[source]
        source: Box<Error>,
        /// What gave out, the components' memory, etcd's database, the machine's memory and disk.
        health: String,
        /// Where the control plane's and the operator's logs are kept.
        logs: PathBuf,
    },
    /// The plot could not be drawn.
    #[error("drawing the plot: {0}")]
    Plot(String),
}

impl Error {
    /// An API error with what was being done.
    pub fn kube(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
        let what = what.into();
        move |source| Error::Kube {
            what,
            source: Box::new(source),
        }
    }

    /// A file error with what was being done.
    pub fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { what, path, source }
    }
}

/// The bench's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
