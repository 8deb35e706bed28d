//! Pods on the fake nodes: kwok makes a scheduled pod Running and Ready at once.

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

use crate::error::{Error, Result};
use crate::wait::{DEFAULT_TIMEOUT, wait_for_object};

/// Name of the one container of [`fake_pod`].
pub const FAKE_CONTAINER: &str = "main";

/// A minimal pod `name` with one container [`FAKE_CONTAINER`] (its image is never pulled).
pub fn fake_pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: FAKE_CONTAINER.to_owned(),
                image: Some("testenv.invalid/main:1".to_owned()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// Whether the pod is Running with condition `Ready=True`.
pub fn is_running_and_ready(pod: &Pod) -> bool {
    let Some(status) = &pod.status else {
        return false;
    };
    status.phase.as_deref() == Some("Running")
        && status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// Creates `pod` through `api` and waits (up to 30 s) until it is Running and Ready.
pub async fn create_running_pod(api: &Api<Pod>, pod: &Pod) -> Result<Pod> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    api.create(&PostParams::default(), pod)
        .await
        .map_err(|e| Error::kube(format!("creating pod {name}"), e))?;
    wait_for_object(
        api,
        &name,
        "pod to be Running and Ready",
        DEFAULT_TIMEOUT,
        is_running_and_ready,
    )
    .await
}
