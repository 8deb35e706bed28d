//! The CelldFleet controller, one file per step of its pipeline: [`reconcile`] runs
//! [`inputs`] → [`plan`] → apply ([`apply_plan`], through [`ssa`]) → [`observe`] → publish (the
//! fleet's [status](crate::fleet::status), through the one writer) → [`next_look`] (pure:
//! settled or not, and when to look again). [`context`] is the controller's own state over
//! the shared one; the [capacity reader](capacity_reads), the [fence watch](fence_watch) and
//! the [status follower](crate::fleet::status::follower) run beside the reconciles.

pub mod apply_plan;
pub mod autoscale_step;
pub mod capacity_reads;
pub mod config_hash;
pub mod context;
pub mod fence_watch;
pub mod fleet_id;
pub mod fleet_set;
pub mod gateway;
pub mod holders;
pub mod inputs;
pub mod name_claim;
pub mod next_look;
pub mod observe;
pub mod plan;
pub mod prefix_claims;
pub mod probe;
pub mod reconcile;
pub mod service_lead;
pub mod service_ports;
pub mod settled;
pub mod source_step;
pub mod ssa;
pub mod status;
