//! Ending a pod on the fake nodes, or holding it before it starts, as a kubelet would report it:
//! the annotations kwok's stages of `testenv/kwok/` read, and helpers that set them and wait for
//! the status.
//!
//! - [`complete_pod`]: the pod ends (Succeeded or Failed), each container with a termination
//!   message (what a container writes to `/dev/termination-log`) and an image ID, if given.
//! - [`hold_pod_waiting`]: the pod's containers cannot start (`ErrImagePull`,
//!   `CreateContainerConfigError`, ...): `state.waiting`, phase Pending.
//! - [`restart_containers`]: the pod's containers exited with a code and were started again:
//!   `lastState.terminated`, a higher `restartCount`, the pod still Running and Ready.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kube::Api;
use kube::api::{Patch, PatchParams};

use crate::error::{Error, Result};
use crate::wait::{DEFAULT_TIMEOUT, wait_for_object};

/// Pod annotation that makes kwok end a Running pod: `Succeeded` (exit code 0) or `Failed`
/// (exit code 1). Set it in a Job's pod template to complete the Job.
pub const COMPLETE_ANNOTATION: &str = "testenv.celld.dev/complete";

/// Pod annotation: when the pod completes ([`COMPLETE_ANNOTATION`]), kwok sets it as
/// `state.terminated.message` of every container.
pub const TERMINATION_MESSAGE_ANNOTATION: &str = "testenv.celld.dev/termination-message";

/// Pod annotation: when the pod completes, kwok sets it as the `imageID` of every container
/// status (the image's digest, as a kubelet reports it once pulled).
pub const IMAGE_ID_ANNOTATION: &str = "testenv.celld.dev/image-id";

/// Pod annotation: while set, kwok keeps every container of the (Pending or Running) pod in
/// `state.waiting` with this reason, the pod Pending and not Ready, without pod IPs. Removing it
/// lets the pod become Running again.
pub const WAITING_REASON_ANNOTATION: &str = "testenv.celld.dev/waiting-reason";

/// Pod annotation: when set, kwok reports every container of the Running pod as restarted after
/// an exit that finished at this time (RFC 3339): `lastState.terminated.finishedAt`.
pub const LAST_EXIT_AT_ANNOTATION: &str = "testenv.celld.dev/last-exit-at";

/// Pod annotation: the `lastState.terminated.exitCode` that goes with [`LAST_EXIT_AT_ANNOTATION`].
pub const LAST_EXIT_CODE_ANNOTATION: &str = "testenv.celld.dev/last-exit-code";

/// Pod annotation: the `restartCount` that goes with [`LAST_EXIT_AT_ANNOTATION`].
pub const RESTARTS_ANNOTATION: &str = "testenv.celld.dev/restarts";

/// Pod annotation: the `state.waiting.message` that goes with [`WAITING_REASON_ANNOTATION`].
pub const WAITING_MESSAGE_ANNOTATION: &str = "testenv.celld.dev/waiting-message";

/// How [`complete_pod`] ends a pod.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// Succeeded (every container exits 0) or Failed (every container exits 1).
    pub succeeded: bool,
    /// The termination message of every container, if any.
    pub termination_message: Option<String>,
    /// The `imageID` of every container status, if any.
    pub image_id: Option<String>,
}

impl Completion {
    /// The pod succeeds, without a termination message or image ID.
    pub fn succeeded() -> Self {
        Completion {
            succeeded: true,
            ..Completion::default()
        }
    }

    /// The pod fails, without a termination message or image ID.
    pub fn failed() -> Self {
        Completion::default()
    }

    /// With `message` as every container's termination message.
    pub fn with_termination_message(mut self, message: impl Into<String>) -> Self {
        self.termination_message = Some(message.into());
        self
    }

    /// With `image_id` as every container's `imageID`.
    pub fn with_image_id(mut self, image_id: impl Into<String>) -> Self {
        self.image_id = Some(image_id.into());
        self
    }

    fn phase(&self) -> &'static str {
        if self.succeeded {
            "Succeeded"
        } else {
            "Failed"
        }
    }

    /// Whether `pod` shows this completion: its phase, and every container terminated with the
    /// message and image ID asked for.
    fn shown_by(&self, pod: &Pod) -> bool {
        let Some(status) = &pod.status else {
            return false;
        };
        status.phase.as_deref() == Some(self.phase())
            && every_container(pod, |c| {
                let Some(terminated) = c.state.as_ref().and_then(|s| s.terminated.as_ref()) else {
                    return false;
                };
                terminated.exit_code == i32::from(!self.succeeded)
                    && non_empty(terminated.message.as_deref())
                        == non_empty(self.termination_message.as_deref())
                    && self.image_id.as_ref().is_none_or(|id| c.image_id == *id)
            })
    }
}

/// Whether `pod` has a status for each of its containers and `check` holds for every one.
fn every_container(pod: &Pod, check: impl Fn(&ContainerStatus) -> bool) -> bool {
    let containers = pod.spec.as_ref().map_or(0, |s| s.containers.len());
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    containers > 0 && statuses.len() == containers && statuses.iter().all(check)
}

/// An empty message is none: kwok sets no message for an empty annotation, as a kubelet sets
/// none for an empty termination log.
fn non_empty(message: Option<&str>) -> Option<&str> {
    message.filter(|m| !m.is_empty())
}

/// Sets (or, for `None`, removes) the pod's annotations `values` with one merge patch.
async fn annotate(api: &Api<Pod>, name: &str, values: &[(&str, Option<&str>)]) -> Result<()> {
    let annotations: serde_json::Map<String, serde_json::Value> = values
        .iter()
        .map(|(key, value)| ((*key).to_owned(), serde_json::json!(value)))
        .collect();
    let patch = serde_json::json!({ "metadata": { "annotations": annotations } });
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| Error::kube(format!("annotating pod {name}"), e))?;
    Ok(())
}

/// Ends the pod `name` as `completion` says (annotating it for kwok) and waits (up to 30 s)
/// until its status shows it: the phase, and every container terminated with the termination
/// message and image ID asked for. Returns the pod.
///
/// The pod completes once Running: one still Pending completes right after it starts; one held
/// by [`hold_pod_waiting`] never does (the wait times out).
pub async fn complete_pod(api: &Api<Pod>, name: &str, completion: &Completion) -> Result<Pod> {
    annotate(
        api,
        name,
        &[
            (COMPLETE_ANNOTATION, Some(completion.phase())),
            (
                TERMINATION_MESSAGE_ANNOTATION,
                completion.termination_message.as_deref(),
            ),
            (IMAGE_ID_ANNOTATION, completion.image_id.as_deref()),
        ],
    )
    .await?;
    let what = format!(
        "pod to be {} with every container terminated{}",
        completion.phase(),
        if completion.termination_message.is_some() {
            " with the termination message"
        } else {
            ""
        }
    );
    wait_for_object(api, name, &what, DEFAULT_TIMEOUT, |pod| {
        completion.shown_by(pod)
    })
    .await
}

/// Reports every container of the Running pod `name` as started again after an exit with
/// `exit_code` at `at` (to the second), its `restarts`-th restart (annotating it for kwok), and waits (up to
/// 30 s) until the status shows it. Returns the pod.
pub async fn restart_containers(
    api: &Api<Pod>,
    name: &str,
    exit_code: i32,
    at: k8s_openapi::jiff::Timestamp,
    restarts: i32,
) -> Result<Pod> {
    // A pod's times have whole seconds.
    let at = k8s_openapi::jiff::Timestamp::from_second(at.as_second()).unwrap_or(at);
    let (code, at_text, count) = (exit_code.to_string(), at.to_string(), restarts.to_string());
    annotate(
        api,
        name,
        &[
            (LAST_EXIT_CODE_ANNOTATION, Some(code.as_str())),
            (RESTARTS_ANNOTATION, Some(count.as_str())),
            (LAST_EXIT_AT_ANNOTATION, Some(at_text.as_str())),
        ],
    )
    .await?;
    let what = format!("pod to show restart {restarts} after exit code {exit_code}");
    wait_for_object(api, name, &what, DEFAULT_TIMEOUT, |pod| {
        every_container(pod, |c| {
            let ended = c.last_state.as_ref().and_then(|s| s.terminated.as_ref());
            c.restart_count == restarts
                && ended.is_some_and(|t| {
                    t.exit_code == exit_code && t.finished_at.as_ref().is_some_and(|f| f.0 == at)
                })
        })
    })
    .await
}

/// Holds the pod `name` before its containers start, as a kubelet that cannot pull the image or
/// create the container reports it: every container `state.waiting{reason, message}`, phase
/// Pending, not Ready. Waits (up to 30 s) until the status shows it; returns the pod. Works on a
/// Pending or Running pod; remove [`WAITING_REASON_ANNOTATION`] to let it run again.
pub async fn hold_pod_waiting(
    api: &Api<Pod>,
    name: &str,
    reason: &str,
    message: Option<&str>,
) -> Result<Pod> {
    annotate(
        api,
        name,
        &[
            (WAITING_REASON_ANNOTATION, Some(reason)),
            (WAITING_MESSAGE_ANNOTATION, message),
        ],
    )
    .await?;
    let what = format!("pod to be Pending with every container waiting ({reason})");
    wait_for_object(api, name, &what, DEFAULT_TIMEOUT, |pod| {
        pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending")
            && every_container(pod, |c| {
                c.state
                    .as_ref()
                    .and_then(|s| s.waiting.as_ref())
                    .is_some_and(|w| {
                        w.reason.as_deref() == Some(reason)
                            && non_empty(w.message.as_deref()) == non_empty(message)
                    })
            })
    })
    .await
}
