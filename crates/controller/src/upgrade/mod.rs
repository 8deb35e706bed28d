//! How a fleet's nodes move to a new celld image: the pure decision ([`decide`]).

pub mod decide;
pub mod held;
pub mod live;
