//! Tests that need no cluster: argument handling, help texts, shell completion, `init` output
//! and admission checks, and the text of `status` (snapshots), also of a fleet with spec.source
//! and of fleets whose nodes report their capacity, of `top`, of `preview`, of `rollout` and of
//! the plan `deploy --waves` prints.
//! One test binary, to link once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers, outside #[test] fns

mod capacity_fixtures;
mod cli_args;
mod cluster_flags;
mod completion_shells;
mod connection_errors;
mod deployer_images;
mod init_output;
mod krew_manifest;
mod kubectl_conventions;
mod preview_args;
mod preview_render;
mod preview_workflow;
mod rollout_args;
mod rollout_fixtures;
mod rollout_plan;
mod rollout_render;
mod status_capacity;
mod status_render;
mod status_source;
mod top_render;
