//! Integration tests on the local control plane (`make cluster-up`): a real kube-apiserver,
//! controller-manager and scheduler, with kwok running pods, `exec` and `logs`. Each test gets
//! its own namespace. Without the control plane they fail, saying to run `make cluster-up`.
//!
//! The operator is not needed (and must not run cluster-wide while these run): the tests make
//! the StatefulSets, pods, fleet status and Events themselves. Only `deploy_loop`,
//! `deploy_wait`, `reconcile_at_once`, `object_stores` and `preview` run it, as a process
//! watching that test's namespace alone, with the test double of `celld deploy` in the deploy
//! pod (`deploy_wait` and `preview` also with a stand-in for the nodes' API). A `deploy` or `rollback` run
//! without an operator passes `--no-wait` (see `support::plugin`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers, outside #[test] fns

mod deploy;
mod deploy_failures;
mod deploy_fan_out;
mod deploy_loop;
mod deploy_slow_down;
mod deploy_vars;
mod deploy_wait;
mod errors;
mod history_rollback;
mod init;
mod kubectl_conventions;
mod kubectl_plugin;
mod logs;
mod object_stores;
mod poc_worker;
mod preview;
mod python_gate;
mod reconcile_at_once;
mod rollout;
mod sourced;
mod status;
mod support;
mod top;
