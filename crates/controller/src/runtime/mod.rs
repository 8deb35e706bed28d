//! The process's life: stand by or lead ([`run`]), wire the watches to the two controllers
//! ([`wiring`]), read the fleets' nodes for their capacity while leading ([`capacity_reads`]),
//! and serve health and metrics over HTTP ([`server`]).

pub mod capacity_reads;
pub mod run;
pub mod server;
pub mod wiring;
