//! The operator against the local control plane (`make cluster-up`): real API server,
//! controller-manager, scheduler, kwok nodes and an S3 server. Each test runs its own operator,
//! watching only the test's namespace, as a service account holding exactly what the
//! namespace-scoped install grants in a watched namespace, judged by the operator's guard.
//!
//! - `support`: starting an operator, and the fixtures the tests share;
//! - `operator_rbac`: the test operators' ServiceAccount, its Roles and the guard;
//! - `adoption`: the version every node serves, a node refusing one, a state that cannot be read;
//! - `autoscaling`: spec.autoscaling on celld's own signals: pressure adds nodes, headroom
//!   removes them, `kubectl scale` is not fought;
//! - `celld_versions`: spec.env refused by the image's celld version, at admission or in status,
//!   and the startup probe of each version;
//! - `children_order`: a new fleet's NetworkPolicy and peer Service before its StatefulSet, its
//!   public Service first while the API server is slow to create Services;
//! - `creation`: a fleet from creation to Ready, with every child;
//! - `deletion`: deleting a fleet deletes every child and its pods;
//! - `durability`: the default durability of each work storage, and `fleet` on Ephemeral said
//!   once (DurabilityAtRisk);
//! - `fences`: nodes' self-fences counted once, repeated ones said on the fleet (NodesFencing);
//! - `fleets_gauge`: the fleets-by-Ready gauge follows the fleets in the next housekeeping round;
//! - `gitops_health`: kstatus (Flux) and Argo CD's Lua health check judge each state of a fleet;
//! - `guard`: the operator's guard refuses its identity what RBAC allows and it never does;
//! - `hand_edits`: hand-edited children repaired, a port another controller adds kept;
//! - `idle_node_reads`: an idle fleet's nodes are read once, at the capacity read rate;
//! - `idle_reconciles`: reconciles at rest write nothing and read nothing from the API server;
//! - `leader`: only the Lease holder writes, a standby takes over;
//! - `manifest_features`: features of the deployed version's manifest the nodes cannot serve
//!   (containers, a feature newer than the image), and a manifest that is not one;
//! - `metrics_auth`: `--metrics-secure`: `/metrics` over HTTPS to bearer tokens allowed `get` of
//!   it only (401 without a token, 403 without the reader role), probes without a token;
//! - `metrics_lint`: the operator process's `/metrics`, with a fleet reconciled, passes `promtool
//!   check metrics` and declares the expected families;
//! - `namespaced_install`: an operator watching two namespaces under their Roles only, and a
//!   fleet in a third left alone;
//! - `no_deployment`: zero nodes until a deployment appears, then Ready and the next version;
//! - `no_gateway_api`: gatewayRefs on the bare control plane, which lacks the Gateway API;
//! - `object_store_support`: an operator reading the emulators, and a fleet's storage env;
//! - `object_stores`: gs:// and az:// fleets with keys at the local emulators;
//! - `pod_history`: every state a fleet's pods went through, for the upgrade tests;
//! - `preview_source`: a preview whose Worker comes from its spec.source, published into its own
//!   prefix;
//! - `previews`: CelldPreviews: their own fleet, a version served, retirement at the TTL,
//!   admission;
//! - `progress_deadline`: a rollout stuck past spec.progressDeadlineSeconds, named and reported
//!   once;
//! - `refused_child`: a child the API server refuses, the others applied, one Warning Event;
//! - `resync_budget`: many fleets stretch the resync to `--resyncs-per-second`;
//! - `rollouts`: CelldRollouts: waves, a refusal rolled back, a webhook gate, pause and
//!   promotion, an operator restart, a fleet deleted and a bucket down mid-rollout;
//! - `routes`: Ingress and HTTPRoute, switched or removed, and the https of status.url;
//! - `scale`: the scale subresource, the StatefulSet and the PodDisruptionBudget;
//! - `shutdown`: the operator stops within its grace;
//! - `source`: spec.source: publish by deploy Job, retries with backoff, stall, drift,
//!   suspension;
//! - `source_flux`: spec.source.sourceRef with Flux's real source-controller and an OCI registry;
//! - `status_follower`: Ready follows the StatefulSet ahead of the reconcile queue;
//! - `storage`: a shared CelldObjectStore, missing or bad credentials, rotation, bucket clients;
//! - `tenant_isolation`: a tenant cannot claim or read another's bucket prefix through the
//!   operator;
//! - `unreachable_nodes`: an operator that cannot reach the nodes' API says so once, in words
//!   that do not change, and writes no status for it;
//! - `unreadable_bucket`: a bucket that cannot be read, reported once, healed;
//! - `upgrades`: celld image changes under celld's upgrade rules;
//! - `user_roles`: the users' `edit` and `view` roles on fleets;
//! - `workload_identity`: fleets without a credentials Secret.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod operator_rbac;
mod support;

mod adoption;
mod autoscaling;
mod celld_versions;
mod children_order;
mod creation;
mod deletion;
mod durability;
mod fences;
mod fleets_gauge;
mod gitops_health;
mod guard;
mod hand_edits;
mod idle_node_reads;
mod idle_reconciles;
mod leader;
mod manifest_features;
mod metrics_auth;
mod metrics_lint;
mod name_taken;
mod namespaced_install;
mod no_deployment;
mod no_gateway_api;
mod object_store_support;
mod object_stores;
mod pod_history;
mod preview_source;
mod previews;
mod progress_deadline;
mod refused_child;
mod resync_budget;
mod rollouts;
mod routes;
mod scale;
mod secret_metadata;
mod shutdown;
mod source;
mod source_flux;
mod status_follower;
mod storage;
mod tenant_isolation;
mod unreachable_nodes;
mod unreadable_bucket;
mod upgrades;
mod user_roles;
mod workload_identity;
