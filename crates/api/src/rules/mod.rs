//! Admission rules for the fields the operator copies into the fleet's children (StatefulSet,
//! Services, Ingress, HTTPRoute, PVCs): a value Kubernetes would refuse in a child is refused on
//! the fleet, with a message naming the field and the fix, instead of failing later.
//!
//! The fields typed with Kubernetes types (Affinity, Toleration, EnvVar, ...) get their bounds and
//! rules from schema transforms (`#[schemars(transform = ...)]`), as k8s-openapi's schemas have
//! none.

pub mod affinity;
pub mod bounds;
pub mod env;
pub mod label_selector;
pub mod metadata;
pub mod names;
pub mod resources;
pub mod tolerations;
pub mod topology_spread;
