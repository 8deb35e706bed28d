//! The process's life: stand by or lead ([`run`]), wire the watches to the three controllers
//! ([`wiring`]), and serve health and metrics over HTTP ([`server`]).

pub mod run;
pub mod server;
pub mod wiring;
