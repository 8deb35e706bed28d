//! The operator against the local control plane (`make cluster-up`): real API server,
//! controller-manager, scheduler, kwok nodes and an S3 server. Each test runs its own operator,
//! watching only the test's namespace, as a service account holding exactly the permissions of
//! config/rbac/role.yaml.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

mod drift_and_failures;
mod leader;
mod lifecycle;
mod no_gateway_api;
mod node_states;
mod object_store_support;
mod object_stores;
mod pod_history;
mod routes;
mod scale;
mod shutdown;
mod status_follower;
mod storage;
mod upgrades;
mod user_roles;
mod workload_identity;
