//! celld-operator: reconciles every CelldFleet into a StatefulSet of celld nodes, its Services,
//! routing, NetworkPolicy and PodDisruptionBudget, and keeps it that way.
//!
//! A reconcile of a fleet runs as one pipeline ([`fleet`]): read its inputs from the caches,
//! plan every child with the pure [`children`] builders, apply the plan with server-side apply
//! under one field manager (skipping objects that already match) and prune what the spec no
//! longer asks for, then hand what it observed to the one [`status`] writer, which writes the
//! status when it changed and publishes every Event.
//!
//! The folders, top to bottom (an arrow only ever points down): [`runtime`] (the process:
//! leader or standby, wiring, HTTP), [`store`] (the CelldObjectStore controller), [`fleet`]
//! (the CelldFleet controller), [`status`], [`storage`] (buckets and credentials), [`nodes`]
//! (what the nodes' internal API says), [`leadership`] (only the Lease holder writes),
//! [`cache`] (watches and their caches), [`children`] (pure builders) and [`upgrade`] (the
//! pure rollout decision). The files at the root are the vocabulary they share: flags, errors,
//! failures, reasons, metrics, RBAC.

pub mod args;
pub mod autoscale;
pub mod cache;
pub mod capacity;
pub mod children;
pub mod error;
pub mod failure;
pub mod fleet;
pub mod leadership;
pub mod locks;
pub mod map_retain;
pub mod metrics;
pub mod nodes;
pub mod preview;
pub mod rbac;
pub mod runtime;
pub mod shared;
pub mod source;
pub mod status;
pub mod storage;
pub mod store;
pub mod upgrade;
