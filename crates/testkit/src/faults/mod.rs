//! Fault injection for resilience tests: the operator as its own process (SIGKILL, restart, its
//! log), a private control plane whose components (its S3 server, for example) can be stopped
//! and started again exactly as up.sh started them, and the fault report `faults/REPORT.md`,
//! assembled from one section per test.

mod killable_operator;
mod private_control_plane;
mod report;

pub use killable_operator::KillableOperator;
pub use private_control_plane::PrivateControlPlane;
pub use report::{REPORT_DIR, ReportSection, assemble_report};
