//! Where a test run writes the fault report: under cargo's build directory, never into the
//! repository, so running the tests leaves the working tree as it was. `make faults-report`
//! points a run at a directory of its own ([`REPORT_DIR_ENV`]) and copies the report from there
//! into the repository's `faults/`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::paths::workspace_root;

/// The report's directory, under the build directory (`target/faults/`); the committed copy
/// lives in the repository directory of the same name.
pub const REPORT_DIR: &str = "faults";

/// Environment variable cargo reads for its build directory.
pub const CARGO_TARGET_DIR_ENV: &str = "CARGO_TARGET_DIR";

/// Environment variable naming a directory to write the report to instead (`make faults-report`
/// sets it to a temporary directory).
pub const REPORT_DIR_ENV: &str = "CELLD_FAULTS_REPORT_DIR";

/// Where this test run writes the report: `$CELLD_FAULTS_REPORT_DIR` if set, else
/// `<build directory>/faults`, the build directory being `$CARGO_TARGET_DIR` or else
/// `<workspace root>/target`. Relative directories are taken from the workspace root.
pub fn report_dir() -> PathBuf {
    report_dir_in(
        std::env::var_os(REPORT_DIR_ENV),
        std::env::var_os(CARGO_TARGET_DIR_ENV),
        &workspace_root(),
    )
}

/// [`report_dir`] for given `$CELLD_FAULTS_REPORT_DIR` and `$CARGO_TARGET_DIR` values and
/// workspace root.
fn report_dir_in(
    report_dir: Option<OsString>,
    cargo_target_dir: Option<OsString>,
    workspace_root: &Path,
) -> PathBuf {
    let set = |dir: Option<OsString>| dir.filter(|d| !d.is_empty());
    if let Some(dir) = set(report_dir) {
        return workspace_root.join(dir);
    }
    let target = set(cargo_target_dir).map_or_else(
        || workspace_root.join("target"),
        |dir| workspace_root.join(dir),
    );
    target.join(REPORT_DIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/src/celld-operator";

    #[test]
    fn without_a_target_dir_the_report_goes_to_the_workspace_target() {
        assert_eq!(
            report_dir_in(None, None, Path::new(ROOT)),
            Path::new("/src/celld-operator/target/faults")
        );
        assert_eq!(
            report_dir_in(
                Some(OsString::new()),
                Some(OsString::new()),
                Path::new(ROOT)
            ),
            Path::new("/src/celld-operator/target/faults")
        );
    }

    #[test]
    fn an_absolute_target_dir_is_taken_as_is() {
        assert_eq!(
            report_dir_in(None, Some("/cache/build".into()), Path::new(ROOT)),
            Path::new("/cache/build/faults")
        );
    }

    #[test]
    fn a_relative_target_dir_is_taken_from_the_workspace_root() {
        assert_eq!(
            report_dir_in(None, Some("out/build".into()), Path::new(ROOT)),
            Path::new("/src/celld-operator/out/build/faults")
        );
    }

    #[test]
    fn a_report_dir_of_its_own_wins_over_the_build_directory() {
        assert_eq!(
            report_dir_in(
                Some("/tmp/run".into()),
                Some("/cache/build".into()),
                Path::new(ROOT)
            ),
            Path::new("/tmp/run")
        );
        assert_eq!(
            report_dir_in(Some("out/report".into()), None, Path::new(ROOT)),
            Path::new("/src/celld-operator/out/report")
        );
    }

    #[test]
    fn the_report_is_never_written_into_the_repository_directory() {
        let committed = workspace_root().join(REPORT_DIR);
        assert_ne!(report_dir(), committed);
        assert!(!report_dir().starts_with(&committed));
    }
}
