//! What every run times and meters with: the watches that see StatefulSets and fleets ready
//! ([`readiness`]), the status lag drawn from them and the audit log ([`status_lag`]), the
//! clock that ties the bench's times to the audit log's ([`clock`]), CPU use
//! ([`cpu_meter`]), what `/proc` says about a process ([`proc_stats`]) and the Events the
//! operator published ([`events`]).

pub mod clock;
pub mod cpu_meter;
pub mod events;
pub mod proc_stats;
pub mod readiness;
pub mod status_lag;
