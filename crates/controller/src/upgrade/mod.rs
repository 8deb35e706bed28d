//! How a fleet's nodes move to a new celld image: the pure decision ([`decide`]) and the
//! client of the nodes' internal API it asks ([`node_api`]).

pub mod decide;
pub mod node_api;
