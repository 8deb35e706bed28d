//! The operator under test as its own process (so its memory and CPU time are its own), started
//! as every test starts it (`celld_fixtures::Launch`) but as it is deployed: a release build,
//! every namespace, its default settings, authenticated as its ServiceAccount.

use crate::error::{Error, Result};
use celld_fixtures::{Launch, OPERATOR_BIN_ENV, OperatorProcess};
use std::path::{Path, PathBuf};

/// The operator binary `$CELLD_OPERATOR_BIN`, which must be given: the bench measures a release
/// build, never the debug one `celld_fixtures::operator_bin` would build.
pub fn binary() -> Result<PathBuf> {
    env_binary(
        OPERATOR_BIN_ENV,
        Error::NoOperator,
        "finding the operator binary ($CELLD_OPERATOR_BIN)",
    )
}

/// The file named by the environment variable `var`: `missing` when it is not set, an error
/// saying `what` was looked for when it names no file.
pub fn env_binary(var: &str, missing: Error, what: &'static str) -> Result<PathBuf> {
    let bin = std::env::var_os(var).map(PathBuf::from).ok_or(missing)?;
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(Error::Io {
            what,
            path: bin,
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }
}

/// What the operator logs: warnings, and when new fleets start applying their public Service
/// first and stop.
const LOG: &str = "warn,celld_operator::fleet::service_lead=info";

/// Starts `bin` with `kubeconfig`, every namespace, default resyncs and no leader election,
/// reaching the nodes' API at `nodes_at` (`HOST:PORT` of the double: kwok's pods run no
/// celld), or, when `None`, at each node's own name as in a cluster (nothing answers there),
/// logging warnings to `log`, and when new fleets start applying their public Service first and
/// stop (and what `directive`, a further `RUST_LOG` directive, asks for); returns once it leads
/// and watches.
pub async fn start(
    bin: &Path,
    kubeconfig: &Path,
    log: &Path,
    nodes_at: Option<&str>,
    directive: Option<&str>,
) -> Result<OperatorProcess> {
    let filter = match directive {
        Some(d) => format!("{LOG},{d}"),
        None => LOG.to_string(),
    };
    let mut launch = Launch::new(bin, kubeconfig, log)
        .args(["--leader-elect=false".to_string()])
        .env("RUST_LOG", filter);
    if let Some(address) = nodes_at {
        launch = launch.args(["--node-api-connect-to".to_string(), address.to_owned()]);
    }
    Ok(OperatorProcess::start_leading(launch).await?)
}
