//! What the operator asks celld's nodes directly, on their internal listener: the [`client`],
//! one [reading](reads) of a fleet's nodes (their states, and a reload for each node behind
//! the deployment pointer), whether the operator [reaches](reachability) the nodes at all and
//! why a node's state is not known ([`unanswered`]), which version each node serves against
//! the pointer's ([`adoption`], pure), and the nodes that fenced themselves ([`fences`]).

pub mod adoption;
pub mod client;
pub mod fences;
pub mod reachability;
pub mod reads;
pub mod unanswered;
