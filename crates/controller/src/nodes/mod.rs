//! What the operator asks celld's nodes directly, on their internal listener: the [`client`],
//! one [reading](reads) of a fleet's nodes (their states, and a reload for each node behind
//! the deployment pointer), and which version each node serves against the pointer's
//! ([`adoption`], pure).

pub mod adoption;
pub mod client;
pub mod reads;
