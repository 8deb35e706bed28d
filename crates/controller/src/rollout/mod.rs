//! CelldRollouts: one Worker shipped to many fleets in waves. A rollout fixes the revision it
//! ships ([`target`]); each fleet of a started wave gets it as if it were its own spec.source
//! (the fleet controller reads the rollout's status from its cache), and the rollout judges each
//! fleet from the status that fleet's reconcile writes ([`fleet_gate`]). The waves move on in a
//! pure [`progress`] step; the [`reconcile`] calls the [`webhook`]s and makes the compare-and-
//! swap writes of a [`rollback`], and the one status writer publishes the status ([`phase`])
//! and the Events ([`notes`]), a fleet's mere progress no more often than [`spacing`] allows.

pub mod context;
pub mod fleet_gate;
pub mod input;
pub mod notes;
pub mod phase;
pub mod progress;
pub mod reconcile;
pub mod rollback;
pub mod spacing;
pub mod target;
pub mod wave_fleets;
pub mod webhook;
