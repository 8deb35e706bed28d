//! A test seam: with [`HOLD_ENV`] set to a directory, the deploy stops right after reading the
//! fleet pointer's ETag and before its compare-and-swap write. It writes `<dir>/held` (the key
//! and what it expects to find) and waits until `<dir>/release` exists, so a test can change the
//! pointer in between and watch the deploy lose the race.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::error::DeployError;

/// The environment variable naming the hold directory.
pub const HOLD_ENV: &str = "CELLD_DEPLOY_DOUBLE_HOLD_DIR";

/// The marker written when the hold starts.
pub const HELD_FILE: &str = "held";

/// The file that ends the hold.
pub const RELEASE_FILE: &str = "release";

/// Longest hold.
const MAX_HOLD: Duration = Duration::from_secs(300);

/// The hold directory, when the seam is asked for.
pub fn dir() -> Option<PathBuf> {
    std::env::var_os(HOLD_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Holds in `dir` before writing `key` (expecting `expect`), until the release file exists.
pub async fn hold(
    dir: &Path,
    key: &str,
    expect: &impl std::fmt::Display,
) -> Result<(), DeployError> {
    let held = dir.join(HELD_FILE);
    let release = dir.join(RELEASE_FILE);
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&held, format!("{key}\n{expect}\n")))
        .map_err(|source| DeployError::Hold {
            path: held.clone(),
            env: HOLD_ENV,
            source,
        })?;
    eprintln!(
        "Test seam {HOLD_ENV}: holding before writing {key} ({expect}) until {} exists",
        release.display()
    );
    let started = Instant::now();
    while !release.exists() {
        if started.elapsed() > MAX_HOLD {
            return Err(DeployError::HoldTimeout {
                key: key.to_string(),
                seconds: MAX_HOLD.as_secs(),
                release,
                env: HOLD_ENV,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}
