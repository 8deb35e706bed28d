//! What every controller shares: the operator's [`settings`], and the resync spread over a grid
//! ([`resync_grid`]) and stretched to a rate when the fleets are many ([`resync_budget`]).

pub mod resync_budget;
pub mod resync_grid;
pub mod settings;
