//! Where a test run writes the fault report: under cargo's build directory, never into the
//! repository, so running the tests leaves the working tree as it was. `make faults-report`
//! copies a run's report into the repository's `faults/`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::paths::workspace_root;

/// The report's directory, under the build directory (`target/faults/`); the committed copy
/// lives in the repository directory of the same name.
pub const REPORT_DIR: &str = "faults";

/// Environment variable cargo reads for its build directory.
pub const CARGO_TARGET_DIR_ENV: &str = "CARGO_TARGET_DIR";

/// Where this test run writes the report: `<build directory>/faults`, the build directory being
/// `$CARGO_TARGET_DIR` (a relative one taken from the workspace root, as the Makefile does) or
/// else `<workspace root>/target`.
pub fn report_dir() -> PathBuf {
    report_dir_in(std::env::var_os(CARGO_TARGET_DIR_ENV), &workspace_root())
}

/// [`report_dir`] for a given `$CARGO_TARGET_DIR` value and workspace root.
fn report_dir_in(cargo_target_dir: Option<OsString>, workspace_root: &Path) -> PathBuf {
    let target = match cargo_target_dir {
        Some(dir) if !dir.is_empty() => workspace_root.join(dir),
        _ => workspace_root.join("target"),
    };
    target.join(REPORT_DIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/src/celld-operator";

    #[test]
    fn without_a_target_dir_the_report_goes_to_the_workspace_target() {
        assert_eq!(
            report_dir_in(None, Path::new(ROOT)),
            Path::new("/src/celld-operator/target/faults")
        );
        assert_eq!(
            report_dir_in(Some(OsString::new()), Path::new(ROOT)),
            Path::new("/src/celld-operator/target/faults")
        );
    }

    #[test]
    fn an_absolute_target_dir_is_taken_as_is() {
        assert_eq!(
            report_dir_in(Some("/cache/build".into()), Path::new(ROOT)),
            Path::new("/cache/build/faults")
        );
    }

    #[test]
    fn a_relative_target_dir_is_taken_from_the_workspace_root() {
        assert_eq!(
            report_dir_in(Some("out/build".into()), Path::new(ROOT)),
            Path::new("/src/celld-operator/out/build/faults")
        );
    }

    #[test]
    fn the_report_is_never_written_into_the_repository_directory() {
        let committed = workspace_root().join(REPORT_DIR);
        assert_ne!(report_dir(), committed);
        assert!(!report_dir().starts_with(&committed));
    }
}
