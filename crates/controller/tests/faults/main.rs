//! The operator under faults of the control plane itself, with the `celld-operator` binary as
//! its own process on a control plane of the suite's own (started in the target's temporary
//! directory for each test and stopped after it; the tests run one at a time, since they kill
//! its components):
//!
//! - `etcd_restart`: etcd is killed under idle fleets and started again 10 s later;
//! - `apiserver_restart`: kube-apiserver is killed while the operator creates children;
//! - `huge_objects`: a 1 GiB pointer and an endpoint that streams without end are refused
//!   before their bodies are read, at a small peak memory;
//! - `failing_watch`: one watch fails for good (its CRD is deleted) under a running operator;
//! - `paused_leader`: the leader is paused beyond its Lease, another replica takes over, the
//!   first resumes;
//! - `lease_unreachable`: the leader can no longer read or renew its Lease (operators in this
//!   process, one of them under the operator's RBAC).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

mod apiserver_restart;
mod etcd_restart;
mod failing_watch;
mod huge_objects;
mod lease_unreachable;
mod paused_leader;
