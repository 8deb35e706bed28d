//! Admission rules for the fields the operator copies into the fleet's children (StatefulSet,
//! Services, Ingress, HTTPRoute, PVCs): a value Kubernetes would refuse in a child is refused on
//! the fleet, with a message naming the field and the fix, instead of failing later.
//!
//! The fields typed with Kubernetes types (Affinity, Toleration, EnvVar, ...) get their bounds and
//! rules from schema transforms (`#[schemars(transform = ...)]`), as k8s-openapi's schemas have
//! none.
//!
//! # Cost
//!
//! The API server refuses a CRD whose rules' estimated cost exceeds 10,000,000 for one rule
//! (times the most items it can run for) or 100,000,000 for the whole schema. The bounds keep
//! the CelldFleet schema at about 32,900,000 as kube-apiserver v1.36 estimates it:
//!
//! | field | estimated cost |
//! |---|---|
//! | affinity | 8,684,119 |
//! | ingress (its annotations' size rule: 6,688,850) | 6,765,575 |
//! | podAnnotations (size rule) | 6,689,300 |
//! | service (annotations' size rule) | 6,688,850 |
//! | env (uniqueness: 64 × 64 names) | 2,812,500 |
//! | topologySpreadConstraints | 968,584 |
//! | spec (21 rules of spec.env names against spec.image's version) | accepted; not measured one by one |
//! | tolerations | 197,966 |
//! | every other field | below 65,000 |
//!
//! The annotation size rules are the costliest single rules (64 values of up to 261,120
//! characters converted to bytes). With 16-item lists and 317-character values in label
//! selectors, affinity alone was estimated at 85,000,000 and the schema at 1.15 times the
//! budget; selector values bounded to the 63 characters of a label value and lists to 8 items
//! brought it to the figure above.

pub mod affinity;
pub mod bounds;
pub mod durations;
pub mod env;
pub mod label_selector;
pub mod local_storage;
pub mod metadata;
pub mod names;
pub mod quantity;
pub mod resources;
pub mod source;
pub mod storage;
pub mod tolerations;
pub mod topology_spread;
pub mod ttl;
pub mod versions;
