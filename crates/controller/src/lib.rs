//! celld-operator: reconciles every CelldFleet into a StatefulSet of celld nodes, its Services,
//! routing, NetworkPolicy and PodDisruptionBudget, and keeps it that way.
//!
//! A reconcile reads its inputs (store, Secret, deployment pointer), builds the desired children
//! with pure [`children`] builders, applies them with server-side apply under one field manager
//! (skipping objects that already match), prunes what the spec no longer asks for, and writes
//! the status only when it changed.

pub mod ambient_credentials;
pub mod apply;
pub mod args;
pub mod bucket_clients;
pub mod cache_writer;
pub mod caches;
pub mod children;
pub mod compact;
pub mod config_hash;
pub mod context;
pub mod controller;
pub mod credentials;
pub mod discovery;
pub mod error;
pub mod events;
pub mod failure;
pub mod fence;
pub mod fenced_client;
pub mod fleet_children;
pub mod gateway;
pub mod heap_release;
pub mod lease_fence;
pub mod map_retain;
pub mod metrics;
pub mod node_api;
pub mod owner_index;
pub mod plan;
pub mod pointer;
pub mod pointer_object_store;
pub mod pointer_reads;
pub mod rbac;
pub mod reason;
pub mod reconcile;
pub mod resync_grid;
pub mod run;
pub mod server;
pub mod service_ports;
pub mod settled;
pub mod status;
pub mod status_follower;
pub mod status_write;
pub mod store_errors;
pub mod store_status;
pub mod upgrade;
pub mod upgrade_probe;
pub mod watch_client;
pub mod watch_health;
pub mod watch_streams;
