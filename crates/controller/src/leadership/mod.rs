//! Only the holder of the leader Lease writes: the write [`fence`], the client that checks it
//! before every write ([`fenced_client`]), and what keeps it in step with the Lease
//! ([`lease_fence`]).

pub mod fence;
pub mod fenced_client;
pub mod lease_fence;
