//! The CelldFleet controller, one file per step of its pipeline: [`reconcile`] runs
//! [`inputs`] → [`plan`] → apply ([`apply_plan`], through [`ssa`]) → [`observe`] → publish (the
//! [status writer](crate::fleet::status::write)); [`context`] is what every reconcile shares.

pub mod apply_plan;
pub mod autoscale_step;
pub mod capacity_reads;
pub mod config_hash;
pub mod context;
pub mod fleet_id;
pub mod fleet_set;
pub mod gateway;
pub mod holders;
pub mod inputs;
pub mod observe;
pub mod plan;
pub mod probe;
pub mod reconcile;
pub mod service_lead;
pub mod service_ports;
pub mod settled;
pub mod source_step;
pub mod ssa;
pub mod status;
