//! celld-operator: reconciles every CelldFleet into a StatefulSet of celld nodes, its Services,
//! routing, NetworkPolicy and PodDisruptionBudget, and keeps it that way.

pub mod children;
pub mod rbac;
