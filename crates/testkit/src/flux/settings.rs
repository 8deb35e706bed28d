//! What the kit's Flux helpers share: the env files up.sh writes for the components it starts,
//! and the time limit on their tools.

use std::path::Path;
use std::time::Duration;

use crate::env_file;
use crate::error::{Error, Result};

/// Longest an `oci-registry push` or an artifact download may take.
pub(super) const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// `KEY=value` lines of an env file written by up.sh; fails with [`Error::NotServed`] naming
/// `what` when it does not exist.
pub(super) fn read_env_file(
    path: &Path,
    what: &'static str,
) -> Result<impl Fn(&'static str) -> Result<String> + use<>> {
    env_file::read(
        path,
        Error::NotServed {
            what,
            path: path.to_path_buf(),
        },
    )
}
