//! What the kit's Flux helpers share: the env files up.sh writes for the components it starts,
//! and the time limit on their tools.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

/// Longest an `oci-registry push` or an artifact download may take.
pub(super) const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// `KEY=value` lines of an env file written by up.sh; fails with [`Error::NotServed`] naming
/// `what` when it does not exist.
pub(super) fn read_env_file(
    path: &Path,
    what: &'static str,
) -> Result<impl Fn(&'static str) -> Result<String> + use<>> {
    if !path.exists() {
        return Err(Error::NotServed {
            what,
            path: path.to_path_buf(),
        });
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("reading the control plane's settings", path, e))?;
    let path = path.to_path_buf();
    Ok(move |key: &'static str| {
        text.lines()
            .filter_map(|line| line.trim().split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().trim_matches('"').to_owned())
            .ok_or_else(|| Error::EmulatorSetting {
                path: path.clone(),
                key,
            })
    })
}
