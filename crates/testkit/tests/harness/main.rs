//! Tests of the local control plane itself (`make cluster-up` first): what the operator's and the
//! kubectl plugin's integration tests rely on. One test binary, one module per topic.

// Test code: a panic with a message is the failure report.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod cascade;
mod deploy_double;
mod exec;
mod flux_sources;
mod gateway_api;
mod jobs;
mod keda;
mod kwok_watch;
mod logs;
mod namespace;
mod pod_states;
mod rbac;
mod s3;
mod statefulset;

/// A test's result: any error fails the test with its message.
type TestResult = Result<(), Box<dyn std::error::Error>>;
