//! spec.autoscaling: the fleet's node count from celld's own capacity signals. What the fleet
//! is [busy](busy) with, who else [contests](contested) spec.replicas, and the
//! [decision](decide) (pure), made in each reconcile from the last capacity reading.

pub mod busy;
pub mod contested;
pub mod decide;
