//! A pod ends with a termination message and an image ID, or is held before it starts, as a
//! kubelet reports it: kwok's stages of testenv/kwok/ driven by `complete_pod` and
//! `hold_pod_waiting`, on plain pods and on a Job's pod (the real Job controller then ends the
//! Job); and a pod kwok makes Running a second time keeps one pod IP.

use std::time::Duration;

use celld_testkit::{
    COMPLETE_ANNOTATION, Check, Completion, DEFAULT_TIMEOUT, FAKE_CONTAINER, TestEnv, complete_pod,
    create_running_pod, fake_pod, hold_pod_waiting, is_running_and_ready, wait_for_object,
    wait_until,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ContainerStateTerminated, Pod};
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};

use crate::TestResult;

/// A helper's result: any error fails the test with its message.
type Outcome<T> = Result<T, Box<dyn std::error::Error>>;

/// A termination message as the publish script writes one: JSON with quotes, backslashes,
/// newlines, HTML-ish characters and non-ASCII text.
const MESSAGE: &str = r#"{"outcome":"Failed","step":"deploy","exitCode":3,"message":"...x <y> & z\n✘ [ERROR] Could not resolve \"./a\\b\"\n\tat index.ts:1:7"}"#;

const IMAGE_ID: &str = "ghcr.io/anthaathi/celld-operator-deployer@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn terminated(pod: &Pod) -> Vec<ContainerStateTerminated> {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .filter_map(|c| c.state.as_ref()?.terminated.clone())
        .collect()
}

fn image_ids(pod: &Pod) -> Vec<String> {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .map(|c| c.image_id.clone())
        .collect()
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

#[tokio::test]
async fn a_pod_completes_with_a_termination_message_and_an_image_id() -> TestResult {
    let env = TestEnv::new("pod-states").await?;
    let pods = env.api::<Pod>();

    create_running_pod(&pods, &fake_pod("ok")).await?;
    let completion = Completion::succeeded()
        .with_termination_message(MESSAGE)
        .with_image_id(IMAGE_ID);
    let pod = complete_pod(&pods, "ok", &completion).await?;
    assert_eq!(phase(&pod), Some("Succeeded"));
    let ended = terminated(&pod);
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].exit_code, 0);
    assert_eq!(ended[0].reason.as_deref(), Some("Completed"));
    assert_eq!(
        ended[0].message.as_deref(),
        Some(MESSAGE),
        "the message arrives byte for byte"
    );
    assert_eq!(image_ids(&pod), [IMAGE_ID]);

    // Without the two annotations: as before, no message and no image ID.
    create_running_pod(&pods, &fake_pod("plain")).await?;
    let pod = complete_pod(&pods, "plain", &Completion::failed()).await?;
    assert_eq!(phase(&pod), Some("Failed"));
    let ended = terminated(&pod);
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].exit_code, 1);
    assert_eq!(ended[0].reason.as_deref(), Some("Error"));
    assert_eq!(ended[0].message, None);
    assert_eq!(image_ids(&pod), [""]);

    env.cleanup().await?;
    Ok(())
}

fn job(name: &str, annotations: serde_json::Value) -> Job {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": name },
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": { "annotations": annotations },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{ "name": "publish", "image": "testenv.invalid/deployer:1" }],
                },
            },
        },
    }))
    .expect("valid Job")
}

/// The name of the Job's one pod, once `ready` holds for it.
async fn job_pod(pods: &Api<Pod>, job: &str, ready: fn(&Pod) -> bool) -> Outcome<String> {
    let selector = ListParams::default().labels(&format!("job-name={job}"));
    let pod = wait_until(format!("the pod of Job {job}"), DEFAULT_TIMEOUT, || async {
        match pods.list(&selector).await {
            Ok(list) => match list.items.into_iter().find(ready) {
                Some(pod) => Check::Done(pod),
                None => Check::Pending(format!("no such pod with job-name={job} yet")),
            },
            Err(e) => Check::Pending(e.to_string()),
        }
    })
    .await?;
    Ok(pod.metadata.name.unwrap_or_default())
}

/// Waits until the Job has condition `type_` True; returns the condition's reason.
async fn job_condition(jobs: &Api<Job>, name: &str, type_: &str) -> Outcome<Option<String>> {
    let job = wait_for_object(jobs, name, &format!("Job {type_}"), DEFAULT_TIMEOUT, |j| {
        j.status
            .iter()
            .flat_map(|s| s.conditions.iter().flatten())
            .any(|c| c.type_ == type_ && c.status == "True")
    })
    .await?;
    Ok(job
        .status
        .into_iter()
        .flat_map(|s| s.conditions.into_iter().flatten())
        .find(|c| c.type_ == type_)
        .and_then(|c| c.reason))
}

#[tokio::test]
async fn a_jobs_pod_ends_the_job_with_its_termination_message() -> TestResult {
    let env = TestEnv::new("pod-states-job").await?;
    let jobs = env.api::<Job>();
    let pods = env.api::<Pod>();
    let none = serde_json::json!({});

    jobs.create(&PostParams::default(), &job("published", none.clone()))
        .await?;
    jobs.create(&PostParams::default(), &job("failed", none))
        .await?;

    let pod = job_pod(&pods, "published", is_running_and_ready).await?;
    let completion = Completion::succeeded()
        .with_termination_message(r#"{"outcome":"Published"}"#)
        .with_image_id(IMAGE_ID);
    let ended = complete_pod(&pods, &pod, &completion).await?;
    assert_eq!(
        terminated(&ended)[0].message.as_deref(),
        Some(r#"{"outcome":"Published"}"#)
    );
    job_condition(&jobs, "published", "Complete").await?;

    let pod = job_pod(&pods, "failed", is_running_and_ready).await?;
    let completion = Completion::failed().with_termination_message(MESSAGE);
    complete_pod(&pods, &pod, &completion).await?;
    let reason = job_condition(&jobs, "failed", "Failed").await?;
    assert_eq!(reason.as_deref(), Some("BackoffLimitExceeded"));
    let pods_of_failed = pods
        .list(&ListParams::default().labels("job-name=failed"))
        .await?;
    assert_eq!(
        pods_of_failed.items.len(),
        1,
        "backoffLimit 0: no second pod"
    );

    env.cleanup().await?;
    Ok(())
}

fn waiting(pod: &Pod) -> Vec<(Option<String>, Option<String>)> {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
        .filter_map(|c| c.state.as_ref()?.waiting.as_ref())
        .map(|w| (w.reason.clone(), w.message.clone()))
        .collect()
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

#[tokio::test]
async fn a_pod_is_held_waiting_until_the_annotation_is_removed() -> TestResult {
    let env = TestEnv::new("pod-states-waiting").await?;
    let pods = env.api::<Pod>();

    // A Running pod goes back to Pending, its container waiting.
    create_running_pod(&pods, &fake_pod("pull")).await?;
    let message = r#"failed to pull image "testenv.invalid/main:1": not found"#;
    let pod = hold_pod_waiting(&pods, "pull", "ErrImagePull", Some(message)).await?;
    assert_eq!(phase(&pod), Some("Pending"));
    assert!(!is_ready(&pod));
    assert_eq!(
        waiting(&pod),
        [(Some("ErrImagePull".to_owned()), Some(message.to_owned()))]
    );
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref());
    assert_eq!(statuses.map(|s| s[0].name.as_str()), Some(FAKE_CONTAINER));

    // It stays so: kwok does not make it Running again, nor keeps rewriting it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let still = pods.get("pull").await?;
    assert_eq!(
        still.metadata.resource_version, pod.metadata.resource_version,
        "held without further writes: {:?}",
        still.status
    );

    // Another reason replaces the first; without a message, none.
    let pod = hold_pod_waiting(&pods, "pull", "ImagePullBackOff", None).await?;
    assert_eq!(waiting(&pod), [(Some("ImagePullBackOff".to_owned()), None)]);

    // Without the annotation it runs again.
    let patch = serde_json::json!({ "metadata": { "annotations": {
        "testenv.celld.dev/waiting-reason": null,
    } } });
    pods.patch("pull", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    wait_for_object(
        &pods,
        "pull",
        "pod Running and Ready again",
        DEFAULT_TIMEOUT,
        is_running_and_ready,
    )
    .await?;

    // A Job's pod held from its template: the Job stays active, the pod Pending.
    let jobs = env.api::<Job>();
    let annotations = serde_json::json!({
        "testenv.celld.dev/waiting-reason": "CreateContainerConfigError",
        "testenv.celld.dev/waiting-message": "secret \"s3\" not found",
    });
    jobs.create(&PostParams::default(), &job("config", annotations))
        .await?;
    let name = job_pod(&pods, "config", |pod| {
        phase(pod) == Some("Pending") && !waiting(pod).is_empty()
    })
    .await?;
    let pod = hold_pod_waiting(
        &pods,
        &name,
        "CreateContainerConfigError",
        Some("secret \"s3\" not found"),
    )
    .await?;
    assert_eq!(
        waiting(&pod),
        [(
            Some("CreateContainerConfigError".to_owned()),
            Some("secret \"s3\" not found".to_owned())
        )]
    );
    let job = jobs.get("config").await?;
    let status = job.status.unwrap_or_default();
    assert_eq!(status.active, Some(1));
    assert_eq!(status.failed, None);

    // A held pod does not complete, even annotated to.
    let annotate = serde_json::json!({ "metadata": { "annotations": {
        COMPLETE_ANNOTATION: "Succeeded",
    } } });
    pods.patch(&name, &PatchParams::default(), &Patch::Merge(&annotate))
        .await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(phase(&pods.get(&name).await?), Some("Pending"));

    env.cleanup().await?;
    Ok(())
}

fn pod_ips(pod: &Pod) -> (Option<String>, Vec<String>) {
    let status = pod.status.as_ref();
    let ips = status
        .and_then(|s| s.pod_ips.as_ref())
        .into_iter()
        .flatten()
        .map(|ip| ip.ip.clone())
        .collect();
    (status.and_then(|s| s.pod_ip.clone()), ips)
}

#[tokio::test]
async fn a_pod_made_running_again_has_one_pod_ip() -> TestResult {
    let env = TestEnv::new("pod-states-replay").await?;
    let pods = env.api::<Pod>();

    let pod = create_running_pod(&pods, &fake_pod("again")).await?;
    let (first, ips) = pod_ips(&pod);
    assert!(first.is_some(), "a Running pod has an IP: {:?}", pod.status);
    assert_eq!(ips.len(), 1);

    // As kwok sees a pod it made Running before its own patch shows: Pending, not Ready, and
    // with the IP it already has. kwok plays pod-ready again, with a fresh IP.
    let back = serde_json::json!({ "status": {
        "phase": "Pending",
        "conditions": [{ "type": "Ready", "status": "False" }],
    } });
    pods.patch_status("again", &PatchParams::default(), &Patch::Merge(&back))
        .await?;
    let pod = wait_for_object(
        &pods,
        "again",
        "pod Running and Ready again",
        DEFAULT_TIMEOUT,
        is_running_and_ready,
    )
    .await?;
    let (ip, ips) = pod_ips(&pod);
    assert_eq!(ips.len(), 1, "one pod IP, not the old and the new: {ips:?}");
    assert_eq!(ip.as_ref(), ips.first(), "podIP is podIPs[0]");

    env.cleanup().await?;
    Ok(())
}
