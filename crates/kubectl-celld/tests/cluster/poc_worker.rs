//! The repository's POC Worker, and copies of it that deploy as another version.

use crate::support::TestResult;
use std::path::{Path, PathBuf};

/// The repository's POC Worker.
pub fn poc_worker() -> PathBuf {
    Path::new(env!("CELLD_WORKSPACE_ROOT")).join("poc/worker")
}

/// A copy of the POC Worker with one line added, so it has another version.
pub fn changed_worker(dir: &Path) -> TestResult<PathBuf> {
    let to = dir.join("worker");
    for rel in [
        "wrangler.jsonc",
        "src/index.js",
        "src/greeting.js",
        "src/respond.js",
        "src/routes.js",
    ] {
        let target = to.join(rel);
        std::fs::create_dir_all(target.parent().ok_or("parent")?)?;
        std::fs::copy(poc_worker().join(rel), &target)?;
    }
    let greeting = to.join("src/greeting.js");
    let mut text = std::fs::read_to_string(&greeting)?;
    text.push_str("// second version\n");
    std::fs::write(&greeting, text)?;
    Ok(to)
}
