//! spec.source in the pipeline: what its inputs are ([`read`], from the caches), what to do
//! ([`decide`], pure, once the bucket's pointer is read) and the deploy Jobs that follow from
//! it ([`deploy_jobs`], pure), which the plan holds and applies like every other child. A Job
//! the API server refuses is a failure of the fleet like a child's; the version being served is
//! never touched.

use crate::buckets::pointer::Pointer;
use crate::cache::source_caches::Assignment;
use crate::children::Desired;
use crate::children::deploy_jobs::{self, DeployJobs, FleetJob};
use crate::fleet::context::Context;
use crate::fleet::fleet_id::FleetId;
use crate::source::decide;
use crate::source::job_state::{self, JobSeen};
use crate::source::terms::{Bucket, Decision, Input};
use crate::source::wanted::{self, Wanted};
use celld_api::reasons::Reason;
use celld_api::{
    CelldFleet, CelldFleetStatus, ResolvedStorage, SourceStatus, WorkerSource, labels,
};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

/// What a fleet's spec.source (or the CelldRollout shipping to it) gives before the bucket is
/// read.
#[derive(Debug, Clone)]
pub struct SourceRead {
    /// The source published: the fleet's spec.source, or the one its rollout fixed.
    pub source: WorkerSource,
    /// The CelldRollout the source comes from, if it is not the fleet's own.
    pub rollout: Option<String>,
    /// The revision wanted.
    pub wanted: Wanted,
    /// Why publishing is suspended, if it is.
    pub suspended: Option<String>,
    /// The publish key of the wanted revision.
    pub key: String,
    /// The names of its Jobs, without the attempt number.
    pub job_base: String,
    /// The Job status.source.lastAttempted names.
    pub job: JobSeen,
    /// status.source as last written (the fleet's newest status, see
    /// [`Written::newest`](crate::status::written::Written::newest)).
    pub previous: Option<SourceStatus>,
    /// The fleet's deploy Jobs.
    pub jobs: Vec<FleetJob>,
}

impl SourceRead {
    /// What changes when the source, its Job or its pod change: a fleet whose fingerprint
    /// differs is reconciled in full.
    pub fn fingerprint(&self) -> String {
        format!(
            "{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}",
            self.wanted,
            self.suspended,
            self.key,
            self.job_base,
            self.job,
            self.previous,
            self.rollout
        )
    }

    /// Whether the last Job ended: the pointer is read afresh then.
    pub fn job_ended(&self) -> bool {
        matches!(self.job, JobSeen::Succeeded { .. } | JobSeen::Failed { .. })
    }
}

/// Why publishing from `source` is suspended, if it is: the annotation (which git never sets)
/// or spec.source.suspend.
fn suspended(fleet: &CelldFleet, source: &WorkerSource) -> Option<String> {
    match fleet.annotations().get(labels::SOURCE_SUSPENDED) {
        Some(why) if !why.trim().is_empty() => Some(format!(
            "{} (annotation {}; remove it to publish again)",
            why.trim(),
            labels::SOURCE_SUSPENDED
        )),
        Some(_) => Some(format!(
            "the annotation {} is set; remove it to publish again",
            labels::SOURCE_SUSPENDED
        )),
        None => source
            .suspend
            .then(|| "spec.source.suspend is true".to_string()),
    }
}

/// The revision a rollout fixed, as `wanted`: the Flux source's artifact only while it is that
/// revision (a newer one waits for the rollout to start it again from its first wave).
fn as_assigned(wanted: Wanted, assignment: &Assignment) -> Wanted {
    match wanted {
        Wanted::Revision(r) if r.revision != assignment.target.revision => Wanted::Waiting {
            reason: Reason::SourceNotReady,
            message: format!(
                "CelldRollout {} ships revision {}, and its source now has {}: waiting for the rollout to start the new revision from its first wave",
                assignment.rollout, assignment.target.revision, r.revision
            ),
            stalled: false,
        },
        other => other,
    }
}

/// The inputs of `fleet`'s spec.source, or of the rollout shipping to it, from the caches;
/// None when neither gives it a source.
pub fn read(
    ctx: &Context,
    fleet: &CelldFleet,
    id: &FleetId,
    storage: &ResolvedStorage,
    latest: Option<&CelldFleetStatus>,
) -> Option<SourceRead> {
    let caches = &ctx.shared.caches.source;
    let (source, assignment) = match fleet.spec.source.as_deref() {
        Some(own) => (own.clone(), None),
        None => {
            let assignment = caches.assignment(&id.namespace, &id.name)?;
            (assignment.target.source.for_fleet(), Some(assignment))
        }
    };
    let wanted = wanted::wanted(&source, |r| caches.flux(r.kind, &id.namespace, &r.name));
    let wanted = match &assignment {
        Some(assignment) => as_assigned(wanted, assignment),
        None => wanted,
    };
    let requested = fleet.annotations().get(labels::RECONCILE_REQUESTED_AT);
    let key = match &wanted {
        Wanted::Revision(d) => wanted::key(
            d,
            &source.path,
            &storage.bucket.to_string(),
            requested.map(String::as_str),
        ),
        Wanted::Waiting { .. } => String::new(),
    };
    let deployer = source
        .deployer_image
        .clone()
        .unwrap_or_else(|| celld_api::contract::deployer::deployer_for(&fleet.spec.image));
    let job_base = wanted::job_base(&id.name, &key, &deployer);
    let previous = latest.and_then(|s| s.source.as_deref().cloned());
    let last = previous.as_ref().and_then(|s| s.last_attempted.as_ref());
    let job = match last.and_then(|a| caches.job(&id.namespace, &a.job)) {
        None => JobSeen::Missing,
        Some(job) => {
            let pod = caches.newest_pod(&id.namespace, &job.name_any());
            job_state::read(&job, pod.as_deref())
        }
    };
    let jobs = caches
        .jobs_of(&id.namespace, &id.uid)
        .iter()
        .map(|job| FleetJob::of(job))
        .collect();
    Some(SourceRead {
        suspended: suspended(fleet, &source),
        rollout: assignment.map(|a| a.rollout),
        source,
        wanted,
        key,
        job_base,
        job,
        previous,
        jobs,
    })
}

/// The next step for a fleet's source `read` and the `pointer` read after its last Job.
pub fn decide(ctx: &Context, read: &SourceRead, pointer: &Pointer) -> Decision {
    let bucket = match pointer {
        Pointer::Deployed(d) => Bucket::Deployed(d.version.clone()),
        Pointer::Missing => Bucket::Missing,
        Pointer::Unknown(_) | Pointer::NoCredentials(_) => Bucket::Unknown,
    };
    let mut decision = decide::decide(&Input {
        spec: &read.source,
        wanted: &read.wanted,
        suspended: read.suspended.as_deref(),
        previous: read.previous.as_ref(),
        key: &read.key,
        job_base: &read.job_base,
        job: &read.job,
        bucket: &bucket,
        first_backoff: ctx.shared.settings.publish_backoff,
        now: Timestamp::now(),
    });
    decision.status.rollout = read.rollout.clone();
    decision
}

/// The deploy Jobs of the fleet `d`: those its source's decision asks for; without a source
/// (spec.source removed, or a rollout that stopped shipping to it, such as one pointing it
/// back), none, and its Jobs still there are deleted: no publish lands after that.
pub fn deploy_jobs(
    ctx: &Context,
    d: &Desired<'_>,
    source: Option<&(SourceRead, Decision)>,
) -> DeployJobs {
    match source {
        Some((read, decision)) => {
            deploy_jobs::build(d, &read.source, decision, &read.key, &read.jobs)
        }
        None => DeployJobs {
            start: None,
            superseded: ctx
                .shared
                .caches
                .source
                .jobs_of(&d.namespace, &d.fleet.uid().unwrap_or_default())
                .iter()
                .map(|job| FleetJob::of(job))
                .filter(|job| !job.deleting)
                .map(|job| job.name)
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::wanted::Revision;
    use celld_api::rollout::{RolloutSource, RolloutTarget};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn assignment(revision: &str) -> Assignment {
        let source: RolloutSource = serde_json::from_value(serde_json::json!({
            "sourceRef": {"kind": "OCIRepository", "name": "web"},
        }))
        .unwrap();
        Assignment {
            rollout: "web".into(),
            target: RolloutTarget {
                source,
                revision: revision.into(),
                digest: None,
                key: "k".into(),
                started_at: Time(Timestamp::UNIX_EPOCH),
            },
        }
    }

    fn revision(revision: &str) -> Wanted {
        Wanted::Revision(Revision {
            revision: revision.into(),
            digest: None,
            artifact: None,
        })
    }

    #[test]
    fn a_fleet_publishes_only_the_revision_its_rollout_fixed() {
        let fixed = assignment("latest@sha256:1");
        assert_eq!(
            as_assigned(revision("latest@sha256:1"), &fixed),
            revision("latest@sha256:1")
        );
        match as_assigned(revision("latest@sha256:2"), &fixed) {
            Wanted::Waiting {
                reason,
                message,
                stalled,
            } => {
                assert_eq!(reason, Reason::SourceNotReady);
                assert!(!stalled);
                assert!(
                    message.contains("CelldRollout web ships revision latest@sha256:1"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
