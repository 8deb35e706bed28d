//! Resilience of the operator, end to end, with the `celld-operator` binary running as its own
//! process against real local control planes:
//!
//! - `fuzz`: thousands of generated CelldFleet, CelldObjectStore and CelldRollout manifests (a
//!   fixed seed, `CELLD_FUZZ_SEED` to change it), each either refused naming its field or
//!   reconciled to a status that says what is going on, never silently ignored (and a rollout
//!   admitted holds nothing its rules promise to refuse);
//! - `s3_outage`: the S3 server of a private control plane stops under Ready fleets and comes
//!   back;
//! - `rotation_kill`: the operator is SIGKILLed right after a shared Secret is rotated;
//! - `hand_edits`: every child kind is edited and deleted by hand;
//! - in every test, no credential value of a Secret the test created appears anywhere the
//!   operator writes or the plugin prints (`leaks`).
//!
//! Each test writes its figures to a section of the fault report in the build directory
//! (`target/faults/REPORT.md`; `make faults-report` copies it to `faults/`). `hand_edits` and
//! `rotation_kill` use the shared control plane of `make cluster-up`; `fuzz` and `s3_outage`
//! each start and stop a private one (`make testenv` builds the binaries). The plugin's binary
//! must be built (`cargo build -p kubectl-celld`).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod cluster;
mod conditions;
mod fixtures;
mod fuzz;
mod hand_edits;
mod leaks;
mod rotation_kill;
mod s3_outage;
mod sentinels;
mod timing;
