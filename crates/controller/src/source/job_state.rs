//! What a deploy Job and its pod say, read from their cached objects: running (and what its pod
//! waits for), published, or failed with the script's own account from the container's
//! termination message (which counts the attempts when `celld deploy` ran again). No
//! `pods/exec`, no logs.

use celld_api::contract::publish::PublishResult;
use k8s_openapi::api::batch::v1::{Job, JobCondition};
use k8s_openapi::api::core::v1::Pod;

/// Name of the deploy Job's container.
pub const CONTAINER: &str = "publish";

/// Where a deploy Job stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobSeen {
    /// The cache holds no such Job.
    Missing,
    /// Not ended; `waiting` says what its pod waits for, if anything.
    Running {
        /// Why the pod is not running yet: a container waiting reason (an image that cannot be
        /// pulled, a missing Secret) or the scheduler's refusal.
        waiting: Option<String>,
        /// Whether a pod of it exists and is not being deleted (without one, what it last
        /// waited for still stands).
        pod: bool,
    },
    /// The Job completed: the revision is published.
    Succeeded {
        /// The image digest the kubelet pulled for the deploy container, when reported.
        image_id: Option<String>,
    },
    /// The Job failed; the message says why.
    Failed {
        /// The script's result, or the Job's and pod's own account.
        message: String,
    },
}

/// The conditions that end a Job: `SuccessCriteriaMet` and `FailureTarget` come first (the
/// Job is decided, its pods may still be terminating), `Complete` and `Failed` once they
/// ended. A publish is as done at the first as at the second.
const SUCCEEDED: [&str; 2] = ["Complete", "SuccessCriteriaMet"];
const FAILED: [&str; 2] = ["Failed", "FailureTarget"];

/// The first condition of `job` among `types` that holds.
fn holds<'a>(job: &'a Job, types: &[&str]) -> Option<&'a JobCondition> {
    job.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .filter(|c| c.status == "True")
        .find(|c| types.contains(&c.type_.as_str()))
}

/// The state of `job` with `pod`, its newest pod if any.
pub fn read(job: &Job, pod: Option<&Pod>) -> JobSeen {
    let result = pod
        .and_then(termination_message)
        .map(|m| PublishResult::read(&m));
    if holds(job, &SUCCEEDED).is_some() {
        return JobSeen::Succeeded {
            image_id: pod.and_then(image_id),
        };
    }
    if let Some(failed) = holds(job, &FAILED) {
        let message = match result {
            Some(Ok(r)) if !r.is_published() => r.describe(),
            Some(Err(e)) => e.to_string(),
            _ => {
                let job = format!(
                    "the deploy Job failed ({}{})",
                    failed.reason.as_deref().unwrap_or("Failed"),
                    failed
                        .message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                );
                match pod.and_then(waiting) {
                    Some(w) => format!("{job}; its pod never ran: {w}"),
                    None => job,
                }
            }
        };
        return JobSeen::Failed { message };
    }
    JobSeen::Running {
        waiting: pod.and_then(waiting),
        pod: pod.is_some_and(|p| p.metadata.deletion_timestamp.is_none()),
    }
}

/// What a fleet's reconcile reads from a deploy Job while it waits for it (hashed, a
/// [`Projection`](crate::cache::worth::Projection) of the Job watch): whether it succeeded or
/// failed (its first ending condition; the second says no more), and whether it is being
/// deleted. Its counters of pods active, ready and succeeded are not.
pub fn job_worth(job: &Job) -> (bool, bool, bool) {
    (
        holds(job, &SUCCEEDED).is_some(),
        holds(job, &FAILED).is_some(),
        job.metadata.deletion_timestamp.is_some(),
    )
}

/// What a fleet's reconcile reads from a deploy pod while its Job runs: what it waits for and
/// whether it is being deleted. Its scheduling, start and end are not: the Job says how it
/// ended, and its end is read from the pod once the Job says so.
pub fn pod_worth(pod: &Pod) -> (Option<String>, bool) {
    (waiting(pod), pod.metadata.deletion_timestamp.is_some())
}

/// The deploy container's termination message, once it ended.
fn termination_message(pod: &Pod) -> Option<String> {
    container(pod)?
        .state
        .as_ref()?
        .terminated
        .as_ref()?
        .message
        .clone()
        .filter(|m| !m.trim().is_empty())
}

fn container(pod: &Pod) -> Option<&k8s_openapi::api::core::v1::ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == CONTAINER)
}

/// The image the kubelet ran the deploy container from, by digest.
fn image_id(pod: &Pod) -> Option<String> {
    let id = &container(pod)?.image_id;
    id.split_once("@sha256:")
        .map(|(_, hex)| format!("sha256:{hex}"))
}

/// What the pod waits for: a container waiting reason other than the plain start-up ones, or
/// the scheduler's refusal.
fn waiting(pod: &Pod) -> Option<String> {
    let status = pod.status.as_ref()?;
    let container = container(pod)
        .and_then(|c| c.state.as_ref())
        .and_then(|s| s.waiting.as_ref())
        .filter(|w| w.reason.as_deref() != Some("ContainerCreating"));
    if let Some(w) = container {
        let reason = w.reason.as_deref().unwrap_or("Waiting");
        return Some(match w.message.as_deref().filter(|m| !m.is_empty()) {
            Some(m) => format!("{reason}: {m}"),
            None => reason.to_string(),
        });
    }
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| {
            c.type_ == "PodScheduled"
                && c.status == "False"
                && c.reason.as_deref() == Some("Unschedulable")
        })
        .map(|c| {
            format!(
                "Unschedulable: {}",
                c.message
                    .as_deref()
                    .unwrap_or("no node fits the deploy pod")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(condition: Option<(&str, &str)>) -> Job {
        let conditions: Vec<_> = condition
            .map(|(t, r)| json!({"type": t, "status": "True", "reason": r, "message": "m"}))
            .into_iter()
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "web-src-1"}, "status": {"conditions": conditions},
        }))
        .unwrap()
    }

    fn pod(state: serde_json::Value, image_id: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-src-1-abcde"},
            "status": {"phase": "Running", "containerStatuses": [{
                "name": CONTAINER, "image": "i", "imageID": image_id, "ready": false,
                "restartCount": 0, "state": state,
            }]},
        }))
        .unwrap()
    }

    #[test]
    fn a_job_or_pod_wakes_its_fleet_only_when_what_the_reconcile_reads_changed() {
        let mut running = job(None);
        let worth = job_worth(&running);
        running.status.as_mut().unwrap().active = Some(1);
        running.status.as_mut().unwrap().ready = Some(1);
        assert_eq!(job_worth(&running), worth, "its counters");
        let met = job_worth(&job(Some(("SuccessCriteriaMet", "CompletionsReached"))));
        assert_ne!(met, worth);
        assert_eq!(
            job_worth(&job(Some(("Complete", "Completed")))),
            met,
            "its second word"
        );
        assert_ne!(job_worth(&job(Some(("Failed", "DeadlineExceeded")))), worth);

        let starting = pod(json!({"waiting": {"reason": "ContainerCreating"}}), "");
        let worth = pod_worth(&starting);
        let ran = pod(json!({"running": {}}), "");
        let ended = pod(json!({"terminated": {"exitCode": 0}}), "");
        assert_eq!(pod_worth(&ran), worth, "started");
        assert_eq!(pod_worth(&ended), worth, "ended: its Job says so");
        let pulling = pod(json!({"waiting": {"reason": "ImagePullBackOff"}}), "");
        assert_ne!(pod_worth(&pulling), worth, "waits for its image");
        let mut deleted = ran.clone();
        deleted.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ));
        assert_ne!(pod_worth(&deleted), worth, "being deleted");
    }

    #[test]
    fn a_completed_job_published_with_the_pulled_digest() {
        let p = pod(
            json!({"terminated": {"exitCode": 0, "message": "{\"outcome\":\"Published\"}"}}),
            "registry.example.com/w@sha256:0123",
        );
        assert_eq!(
            read(&job(Some(("Complete", "Completed"))), Some(&p)),
            JobSeen::Succeeded {
                image_id: Some("sha256:0123".into())
            }
        );
    }

    #[test]
    fn a_job_is_ended_by_its_first_ending_condition() {
        assert_eq!(
            read(
                &job(Some(("SuccessCriteriaMet", "CompletionsReached"))),
                None
            ),
            JobSeen::Succeeded { image_id: None }
        );
        let JobSeen::Failed { message } =
            read(&job(Some(("FailureTarget", "BackoffLimitExceeded"))), None)
        else {
            panic!("failed");
        };
        assert!(message.contains("BackoffLimitExceeded"), "{message}");
    }

    #[test]
    fn a_failed_job_says_what_the_script_said() {
        let p = pod(
            json!({"terminated": {"exitCode": 1, "message": "{\"outcome\":\"Failed\",\"step\":\"deploy\",\"exitCode\":1,\"message\":\"wrangler.jsonc not found\"}"}}),
            "",
        );
        let JobSeen::Failed { message } =
            read(&job(Some(("Failed", "BackoffLimitExceeded"))), Some(&p))
        else {
            panic!("failed");
        };
        assert!(message.contains("wrangler.jsonc not found"), "{message}");
    }

    #[test]
    fn a_failed_job_after_retries_says_how_many_attempts_ran() {
        let p = pod(
            json!({"terminated": {"exitCode": 1, "message": "{\"outcome\":\"Failed\",\"step\":\"deploy\",\"exitCode\":1,\"message\":\"writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed\",\"attempts\":4}"}}),
            "",
        );
        let JobSeen::Failed { message } =
            read(&job(Some(("Failed", "BackoffLimitExceeded"))), Some(&p))
        else {
            panic!("failed");
        };
        assert_eq!(
            message,
            "celld deploy exited with 1 after 4 attempts: writing deploy/current.json failed (HTTP 503 SlowDown): the write may have committed"
        );
        let retried = pod(
            json!({"terminated": {"exitCode": 0, "message": "{\"outcome\":\"Published\",\"attempts\":3}"}}),
            "",
        );
        assert_eq!(
            read(&job(Some(("Complete", "Completed"))), Some(&retried)),
            JobSeen::Succeeded { image_id: None }
        );
    }

    #[test]
    fn a_job_past_its_deadline_names_what_its_pod_waited_for() {
        let p = pod(
            json!({"waiting": {"reason": "ErrImagePull", "message": "not found"}}),
            "",
        );
        assert_eq!(
            read(&job(None), Some(&p)),
            JobSeen::Running {
                waiting: Some("ErrImagePull: not found".into()),
                pod: true,
            }
        );
        let JobSeen::Failed { message } =
            read(&job(Some(("Failed", "DeadlineExceeded"))), Some(&p))
        else {
            panic!("failed");
        };
        insta::assert_snapshot!(message, @"the deploy Job failed (DeadlineExceeded: m); its pod never ran: ErrImagePull: not found");
    }

    #[test]
    fn a_job_without_a_pod_yet_runs() {
        assert_eq!(
            read(&job(None), None),
            JobSeen::Running {
                waiting: None,
                pod: false
            }
        );
    }
}
