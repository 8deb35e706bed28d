//! spec.source: the operator publishes the revision a fleet declares with a deploy Job (the
//! test plays the kubelet for its pod: it writes the pointer `celld deploy` would, then ends the
//! pod with the script's result in its termination message), retries a failed publish with
//! backoff and stalls after spec.source.retries, corrects or reports drift, and publishes
//! nothing while suspended; behind a bucket that answers the first writes with `SlowDown`, the
//! test runs the Job's own command with the deploy double, which publishes at the third attempt.

mod deadline;
mod drift;
mod harness;
mod job_name_taken;
mod publishing;
mod retries;
mod slow_down;

pub(crate) use harness::{V1, attempt_pod, attempt_pod_of, restricted};
