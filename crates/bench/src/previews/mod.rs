//! Previews of one parent fleet under one operator ([`run`]): the objects the run creates
//! ([`workload`]) and the watches that time them ([`watch`]).

pub mod run;
pub mod watch;
pub mod workload;
