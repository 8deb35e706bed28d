//! Talking to the cluster: kubectl's cluster flags and kubeconfig rules, reading fleets,
//! previews and rollouts (and the annotations `rollout` sets on them), the fleets' storage,
//! Secret and node pods, running commands in pods over `pods/exec`, the `deployed-at`
//! annotation and the wait for every node to serve a new version, a fleet's spec.source and its
//! suspension, the capacity its nodes report, and the shell-completion candidates read from the
//! cluster.

pub mod adoption;
pub mod annotate;
pub mod capacity;
pub mod complete;
pub mod exec;
pub mod flags;
pub mod fleet_context;
pub mod fleets;
pub mod kubeconfig;
pub mod previews;
pub mod rollouts;
pub mod source;
