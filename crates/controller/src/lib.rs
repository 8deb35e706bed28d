//! celld-operator: reconciles every CelldFleet into a StatefulSet of celld nodes, its Services,
//! routing, NetworkPolicy and PodDisruptionBudget, and keeps it that way.
//!
//! A reconcile of a fleet runs as one pipeline ([`fleet`]): read its inputs from the caches,
//! plan every child with the pure [`children`] builders, apply the plan with server-side apply
//! under one field manager (skipping objects that already match) and prune what the spec no
//! longer asks for, then hand what it observed to the one [`status`] writer, which writes the
//! status when it changed and publishes every Event.
//!
//! The folders, top to bottom (an arrow only ever points down; folders on one line stand side
//! by side and import nothing from each other):
//! - [`runtime`]: the process: leader or standby, wiring of the four controllers, HTTP;
//! - [`fleet`], [`preview`], [`rollout`] and [`store`]: the four controllers (CelldFleet,
//!   CelldPreview, CelldRollout, CelldObjectStore), each with its own small context over the
//!   shared one;
//! - [`shared`]: what every controller shares: settings, the shared context, the retry backoff
//!   and the start and end of every reconcile;
//! - [`leadership`] (only the Lease holder writes) and [`buckets`] (object storage and its
//!   credentials: the pointer, the manifest, the clients, a fleet's storage resolved);
//! - [`autoscale`] (spec.autoscaling, pure), [`cache`] (watches and their caches) and
//!   [`status`] (the one writer of every kind's status and Events, and the statuses written that
//!   the caches may not show yet);
//! - [`capacity`] (what nodes report of their capacity), [`children`] (pure builders) and
//!   [`nodes`] (what the nodes' internal API says);
//! - [`source`] (spec.source, pure) and [`upgrade`] (the pure rollout decision).
//!
//! The files at the root are the vocabulary they share: flags ([`args`]), errors
//! ([`error`]), failures ([`failure`]), metrics ([`metrics`]), RBAC ([`rbac`]) and the admission guard on the operator's
//! own identity ([`guard`]), the one lock
//! helper ([`locks`]) and the map shrinking after removals ([`map_retain`]). Condition and
//! Event reasons are the api crate's ([`celld_api::reasons`]).

pub mod args;
pub mod autoscale;
pub mod buckets;
pub mod cache;
pub mod capacity;
pub mod children;
pub mod error;
pub mod failure;
pub mod fleet;
pub mod guard;
pub mod leadership;
pub mod locks;
pub mod map_retain;
pub mod metrics;
pub mod nodes;
pub mod preview;
pub mod rbac;
pub mod rollout;
pub mod runtime;
pub mod shared;
pub mod source;
pub mod status;
pub mod store;
pub mod upgrade;
