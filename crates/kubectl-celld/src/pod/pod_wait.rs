//! Waiting for the deploy Job's pod to run, saying what it waits for and failing fast (with
//! what to do) when the pod cannot start.

use super::job::CONTAINER;
use crate::error::{Error, Result};
use crate::text::progress::Progress;
use celld_api::ResolvedStorage;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::Api;
use kube::api::ListParams;
use std::time::{Duration, Instant};

/// Container waiting reasons that will not resolve by waiting.
const FATAL_WAITING: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "CrashLoopBackOff",
];

/// What a pod's state means for the deploy.
#[derive(Debug, PartialEq, Eq)]
pub enum PodState {
    /// Not running yet; the text says why.
    Waiting(String),
    /// The deploy container runs.
    Running,
    /// It will not run; the text says why and what to do.
    Failed(String),
}

/// What to check when the deploy container's configuration cannot be made
/// (`CreateContainerConfigError`): the credentials Secret and the keys it needs for the bucket,
/// or, under workload identity, the pod's description.
pub fn config_hint(storage: &ResolvedStorage) -> String {
    match &storage.credentials_secret {
        Some(secret) => format!(
            "check that Secret '{secret}' exists with {}",
            celld_api::resolve::needed_keys(&[storage.bucket.scheme])
        ),
        None => "see kubectl describe pod for details".into(),
    }
}

/// Reads a pod's state; `config_hint` is [`config_hint`].
pub fn state(pod: &Pod, config_hint: &str) -> PodState {
    let Some(status) = &pod.status else {
        return PodState::Waiting("Pending".into());
    };
    let phase = status.phase.clone().unwrap_or_else(|| "Pending".into());
    if matches!(phase.as_str(), "Failed" | "Succeeded") {
        return PodState::Failed(format!(
            "the deploy pod ended ({phase}{}) before the deploy ran",
            status
                .message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ));
    }
    let container = status
        .container_statuses
        .iter()
        .flatten()
        .find(|c| c.name == CONTAINER);
    if let Some(c) = container {
        let st = c.state.as_ref();
        if st.and_then(|s| s.running.as_ref()).is_some() {
            return PodState::Running;
        }
        if let Some(w) = st.and_then(|s| s.waiting.as_ref()) {
            let reason = w.reason.clone().unwrap_or_default();
            let message = w.message.clone().unwrap_or_default();
            if FATAL_WAITING.contains(&reason.as_str()) {
                return PodState::Failed(format!(
                    "the deploy pod cannot start: {reason}{}; {}",
                    if message.is_empty() {
                        String::new()
                    } else {
                        format!(": {message}")
                    },
                    hint(&reason, config_hint)
                ));
            }
            return PodState::Waiting(format!("{phase} ({reason})"));
        }
        if st.and_then(|s| s.terminated.as_ref()).is_some() {
            return PodState::Failed(
                "the deploy container exited before the deploy ran: does the image have sh and sleep?"
                    .into(),
            );
        }
    }
    let unschedulable = status.conditions.iter().flatten().find(|c| {
        c.type_ == "PodScheduled"
            && c.status == "False"
            && c.reason.as_deref() == Some("Unschedulable")
    });
    match unschedulable {
        Some(c) => PodState::Waiting(format!(
            "Pending (unschedulable: {})",
            c.message.as_deref().unwrap_or("no node fits")
        )),
        None => PodState::Waiting(phase),
    }
}

fn hint(reason: &str, config_hint: &str) -> String {
    match reason {
        "CreateContainerConfigError" => config_hint.to_string(),
        "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName" => {
            "check the image name (--deployer-image or --image) and that the fleet's imagePullSecrets can pull it".into()
        }
        _ => "see kubectl describe pod for details".into(),
    }
}

/// Waits until the Job (by uid) has a pod whose deploy container runs, and returns its name.
pub async fn wait(
    pods: &Api<Pod>,
    events: &Api<Event>,
    job: &str,
    job_uid: &str,
    config_hint: &str,
    timeout: Duration,
    progress: &mut Progress,
) -> Result<String> {
    let ns = pods.namespace().unwrap_or_default().to_string();
    let selector = format!("batch.kubernetes.io/controller-uid={job_uid}");
    let started = Instant::now();
    let mut last = String::new();
    progress.note(&format!(
        "Waiting for the deploy pod of Job {job} to start (up to {}s)",
        timeout.as_secs()
    ));
    loop {
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| Error::api("list", "pods", Some(&ns), e))?;
        let shown = match list.items.first() {
            Some(pod) => {
                let name = pod.metadata.name.clone().unwrap_or_default();
                match state(pod, config_hint) {
                    PodState::Running => return Ok(name),
                    PodState::Failed(why) => {
                        return Err(Error::Deploy(format!(
                            "{why} (pod {ns}/{name}; see kubectl describe pod -n {ns} {name})"
                        )));
                    }
                    PodState::Waiting(why) => format!("  pod {name}: {why}"),
                }
            }
            None => {
                if let Some(why) = create_failure(events, job).await {
                    return Err(Error::Deploy(format!(
                        "the deploy Job {ns}/{job} cannot create its pod: {why}"
                    )));
                }
                "  the Job has no pod yet".to_string()
            }
        };
        if shown != last {
            progress.note(&shown);
            last = shown;
        }
        if started.elapsed() > timeout {
            return Err(Error::Deploy(format!(
                "the deploy pod did not start within {}s (last seen: {}); raise --pod-timeout, or see kubectl describe job -n {ns} {job}",
                timeout.as_secs(),
                last.trim()
            )));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The message of the Job's latest FailedCreate event (a PodSecurity or quota refusal).
async fn create_failure(events: &Api<Event>, job: &str) -> Option<String> {
    let params = ListParams::default().fields(&format!(
        "involvedObject.kind=Job,involvedObject.name={job},reason=FailedCreate"
    ));
    let list = events.list(&params).await.ok()?;
    list.items.into_iter().next_back().and_then(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateRunning, ContainerStateWaiting, ContainerStatus,
        PodCondition, PodStatus,
    };

    fn pod(phase: &str, state: Option<ContainerState>) -> Pod {
        Pod {
            status: Some(PodStatus {
                phase: Some(phase.into()),
                container_statuses: state.map(|s| {
                    vec![ContainerStatus {
                        name: CONTAINER.into(),
                        state: Some(s),
                        ..ContainerStatus::default()
                    }]
                }),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    fn waiting(reason: &str, message: &str) -> ContainerState {
        ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(reason.into()),
                message: Some(message.into()),
            }),
            ..ContainerState::default()
        }
    }

    #[test]
    fn running_container_is_running() {
        let s = ContainerState {
            running: Some(ContainerStateRunning::default()),
            ..ContainerState::default()
        };
        assert_eq!(state(&pod("Running", Some(s)), "x"), PodState::Running);
    }

    #[test]
    fn missing_secret_fails_with_a_hint() {
        let p = pod(
            "Pending",
            Some(waiting(
                "CreateContainerConfigError",
                "secret \"s3\" not found",
            )),
        );
        let mut storage = ResolvedStorage {
            store: None,
            bucket: celld_api::BucketUrl::parse("s3://celld/web").unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: Some("s3".into()),
        };
        let PodState::Failed(why) = state(&p, &config_hint(&storage)) else {
            panic!("should fail")
        };
        insta::assert_snapshot!(why, @r#"the deploy pod cannot start: CreateContainerConfigError: secret "s3" not found; check that Secret 's3' exists with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (S3)"#);
        storage.bucket = celld_api::BucketUrl::parse("gs://celld/web").unwrap();
        insta::assert_snapshot!(config_hint(&storage), @"check that Secret 's3' exists with key GOOGLE_SERVICE_ACCOUNT_KEY (Google Cloud Storage)");
    }

    #[test]
    fn image_pull_fails_and_creating_waits() {
        let p = pod("Pending", Some(waiting("ImagePullBackOff", "")));
        assert!(matches!(state(&p, "s"), PodState::Failed(w) if w.contains("--deployer-image")));
        let p = pod("Pending", Some(waiting("ContainerCreating", "")));
        assert_eq!(
            state(&p, "s"),
            PodState::Waiting("Pending (ContainerCreating)".into())
        );
    }

    #[test]
    fn unschedulable_is_shown() {
        let mut p = pod("Pending", None);
        if let Some(s) = p.status.as_mut() {
            s.conditions = Some(vec![PodCondition {
                type_: "PodScheduled".into(),
                status: "False".into(),
                reason: Some("Unschedulable".into()),
                message: Some("0/3 nodes are available".into()),
                ..PodCondition::default()
            }]);
        }
        assert_eq!(
            state(&p, "s"),
            PodState::Waiting("Pending (unschedulable: 0/3 nodes are available)".into())
        );
    }
}
