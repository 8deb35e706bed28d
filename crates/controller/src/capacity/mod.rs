//! What the fleets' nodes report about their capacity on `GET /state`: one [reading](reading)
//! of a fleet, what it says to an autoscaler ([`signals`], celld's rule), the last reading of
//! every fleet ([`store`]) and the gauges exported from it ([`exported`]). The readings
//! themselves are taken by the runtime's capacity reader, at a bounded rate.

pub mod exported;
pub mod reading;
pub mod signals;
pub mod store;
