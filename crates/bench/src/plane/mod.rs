//! The fresh local control plane each run stands on ([`control_plane`]): the operator's
//! identity on it ([`identity`]), what kwok could not do on it ([`kwok_refusals`]), and what
//! gave out when a run failed ([`health`]).

pub mod control_plane;
pub mod health;
pub mod identity;
pub mod kwok_refusals;
