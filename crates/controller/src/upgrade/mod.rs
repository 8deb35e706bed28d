//! How a fleet's nodes move to a new celld image: the pure decision ([`decide`]) from the live
//! StatefulSet ([`live`]) and what the reconcile probed ([`probed`]), where it stands
//! ([`progress`]), and the settings held until every node runs the release that allows them
//! ([`held`]).

pub mod decide;
pub mod held;
pub mod live;
pub mod probed;
pub mod progress;
