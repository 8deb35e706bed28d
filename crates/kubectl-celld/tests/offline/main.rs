//! Tests that need no cluster: argument handling, help texts, shell completion, `init` output
//! and admission checks, and the text of `status` (snapshots), also of a fleet with spec.source.
//! One test binary, to link once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers, outside #[test] fns

mod cli_args;
mod cluster_flags;
mod completion_shells;
mod connection_errors;
mod deployer_images;
mod init_output;
mod krew_manifest;
mod kubectl_conventions;
mod status_render;
mod status_source;
