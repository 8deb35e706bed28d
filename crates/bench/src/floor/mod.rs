//! The floor: the least an operator that reports readiness must send for the bench's fleets,
//! timed with no operator running ([`run`]). The children the operator's own builders render
//! for each fleet ([`children`]), the pointer and node states it reads ([`reads`]), the one
//! Ready status per fleet ([`status`], due as [`fleets`] tracks them), and the client tasks
//! ([`work`]) that share one queue of requests ([`queue`]).

pub mod children;
pub mod fleets;
pub mod queue;
pub mod reads;
pub mod run;
pub mod status;
pub mod work;
