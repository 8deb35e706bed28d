//! The deploy Jobs a fleet with spec.source should have, as a child of its plan: the Job the
//! source's decision starts (built by [`source_job`]) and the fleet's Jobs it supersedes (every
//! finished one it does not keep, and a running one of another publish key unless publishing is
//! suspended). A Job is never changed once created: its name carries its publish key and
//! deployer. Pure: the fleet's Jobs come from the caches as [`FleetJob`]s.

use crate::children::Desired;
use crate::children::source_job::{self, KEY_LABEL, Publish};
use crate::source::job_state::{self, JobSeen};
use crate::source::terms::Decision;
use celld_api::WorkerSource;
use celld_api::reasons::Reason;
use k8s_openapi::api::batch::v1::Job;
use kube::ResourceExt;

/// One deploy Job of a fleet, as the caches hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetJob {
    /// Its name.
    pub name: String,
    /// Whether it ended (succeeded or failed).
    pub ended: bool,
    /// Its publish key.
    pub key: Option<String>,
    /// Whether it is being deleted.
    pub deleting: bool,
}

impl FleetJob {
    /// What the plan needs of `job`.
    pub fn of(job: &Job) -> Self {
        Self {
            name: job.name_any(),
            ended: !matches!(job_state::read(job, None), JobSeen::Running { .. }),
            key: job.labels().get(KEY_LABEL).cloned(),
            deleting: job.metadata.deletion_timestamp.is_some(),
        }
    }
}

/// The deploy Jobs of one fleet's plan.
#[derive(Debug, Clone, Default)]
pub struct DeployJobs {
    /// The Job to start, if it does not exist yet.
    pub start: Option<Job>,
    /// The fleet's Jobs to delete.
    pub superseded: Vec<String>,
}

/// The deploy Jobs of the fleet `d`, whose source's `decision` under publish `key` was taken
/// with its Jobs `jobs`.
pub fn build(
    d: &Desired<'_>,
    source: &WorkerSource,
    decision: &Decision,
    key: &str,
    jobs: &[FleetJob],
) -> DeployJobs {
    let start = decision.start.as_ref().map(|start| {
        source_job::build(
            d,
            &Publish {
                source,
                name: &start.name,
                key,
                artifact: start.desired.artifact.as_ref(),
            },
        )
    });
    let suspended = decision.synced.reason == Reason::Suspended;
    let superseded = jobs
        .iter()
        .filter(|job| !job.deleting && !decision.keep.contains(&job.name))
        .filter(|job| job.ended || (job.key.as_deref() != Some(key) && !suspended))
        .map(|job| job.name.clone())
        .collect();
    DeployJobs { start, superseded }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures::{MINIMAL, desired, fleet};
    use crate::source::terms::{Start, Synced};
    use crate::source::wanted::Revision;
    use celld_api::WorkerSource;

    fn job(name: &str, ended: bool, key: &str) -> FleetJob {
        FleetJob {
            name: name.into(),
            ended,
            key: Some(key.into()),
            deleting: false,
        }
    }

    fn decision(start: Option<&str>, keep: &[&str], reason: Reason) -> Decision {
        Decision {
            status: Default::default(),
            synced: Synced {
                status: None,
                reason,
                message: String::new(),
                stalled: false,
                progressing: false,
            },
            start: start.map(|name| Start {
                name: name.into(),
                desired: Revision {
                    revision: "registry.example.com/web-src@sha256:ab".into(),
                    digest: None,
                    artifact: None,
                },
            }),
            keep: keep.iter().map(|k| (*k).to_string()).collect(),
            wake_at: None,
            drift_warning: None,
        }
    }

    #[test]
    fn the_started_job_is_built_and_finished_or_superseded_ones_go() {
        let f = fleet(MINIMAL);
        let source = WorkerSource::from_image("registry.example.com/web-src@sha256:ab");
        let d = desired(&f);
        let jobs = [
            job("web-k1-1", true, "k1"),
            job("web-k2-1", false, "k2"),
            job("web-k3-1", false, "k3"),
            job("web-k3-0", true, "k3"),
            FleetJob {
                deleting: true,
                ..job("web-k0-1", true, "k0")
            },
        ];
        let planned = build(
            &d,
            &source,
            &decision(Some("web-k3-2"), &["web-k3-0"], Reason::Publishing),
            "k3",
            &jobs,
        );
        assert_eq!(
            planned.start.as_ref().map(|j| j.name_any()).as_deref(),
            Some("web-k3-2")
        );
        // Finished and not kept, or running under another key; the kept one and the one being
        // deleted stay.
        assert_eq!(planned.superseded, ["web-k1-1", "web-k2-1"]);

        // Suspended: a running Job of another key is left to finish.
        let planned = build(
            &d,
            &source,
            &decision(None, &[], Reason::Suspended),
            "k3",
            &jobs,
        );
        assert!(planned.start.is_none());
        assert_eq!(planned.superseded, ["web-k1-1", "web-k3-0"]);
    }
}
