//! Fault injection for resilience tests: a private control plane whose components (its S3
//! server, for example) can be stopped and started again exactly as up.sh started them, an S3
//! front that answers the first writes with `SlowDown` ([`SlowDownFront`]), and the
//! fault report, assembled from one section per test under the build directory
//! (`target/faults/REPORT.md`; the committed copy, `faults/REPORT.md`, is refreshed by `make
//! faults-report`). (The operator as a process a test kills and starts again is
//! `celld_fixtures::OperatorProcess`.)

mod private_control_plane;
mod report;
mod report_dir;
mod slow_down_front;

pub use private_control_plane::PrivateControlPlane;
pub use report::{ReportSection, assemble_report};
pub use report_dir::{CARGO_TARGET_DIR_ENV, REPORT_DIR, REPORT_DIR_ENV, report_dir};
pub use slow_down_front::SlowDownFront;
