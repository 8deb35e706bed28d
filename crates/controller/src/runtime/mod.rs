//! The process's life: stand by or lead ([`run`]), wire the watches to the three controllers
//! ([`wiring`]), and serve health and metrics ([`endpoints`]): the probes over plain HTTP
//! ([`server`]), and `/metrics` there or over HTTPS to authorized scrapers
//! ([`secure_metrics`]).

pub mod endpoints;
pub mod run;
pub mod secure_metrics;
pub mod server;
pub mod wiring;
