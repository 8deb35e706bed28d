//! CelldRollouts on the local control plane, with the S3 server, the node double (each fleet's
//! nodes adopt what its own pointer names) and the test playing the kubelet of the deploy pods:
//! waves one after the other, a node refusing the version halting and pointing the moved
//! fleets back, a webhook gate, pause and promotion, an operator restart and a fleet deleted
//! mid-wave, and a bucket down for one fleet.

mod faults;
mod gates;
mod harness;
mod held;
mod refusal;
mod waves;
