//! The operator under test: its release build as a process of its own ([`process`]), its run
//! on one fleet count until it settles and then idles ([`run`]), and the stand-in kubelet for
//! the deploy pods it starts ([`deploy_pods`]).

pub mod deploy_pods;
pub mod process;
pub mod run;
