//! A Job's pod stays Running (so a client can exec into it) until annotated to complete.

use std::time::Duration;

use celld_testkit::{
    COMPLETE_ANNOTATION, Check, DEFAULT_TIMEOUT, TestEnv, is_running_and_ready, wait_for_object,
    wait_until,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams, PostParams};

use crate::TestResult;

fn job(name: &str) -> Job {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": name },
        "spec": {
            "backoffLimit": 0,
            "template": { "spec": {
                "restartPolicy": "Never",
                "containers": [{ "name": "deploy", "image": "testenv.invalid/deploy:1" }],
            }},
        },
    }))
    .expect("valid Job")
}

#[tokio::test]
async fn job_pod_stays_running_until_annotated_complete() -> TestResult {
    let env = TestEnv::new("jobs").await?;
    let jobs = env.api::<Job>();
    jobs.create(&PostParams::default(), &job("deploy")).await?;
    let pods = env.api::<Pod>();
    let selector = ListParams::default().labels("job-name=deploy");
    let pod = wait_until(
        "the Job's pod to be Running and Ready",
        DEFAULT_TIMEOUT,
        || async {
            match pods.list(&selector).await {
                Ok(list) => match list.items.into_iter().find(is_running_and_ready) {
                    Some(pod) => Check::Done(pod),
                    None => Check::Pending("no Running and Ready pod with job-name=deploy".into()),
                },
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    let name = pod.metadata.name.unwrap_or_default();

    tokio::time::sleep(Duration::from_secs(2)).await;
    let still = pods.get(&name).await?;
    assert!(
        is_running_and_ready(&still),
        "the Job's pod must stay Running: {:?}",
        still.status
    );

    let patch =
        serde_json::json!({ "metadata": { "annotations": { COMPLETE_ANNOTATION: "Succeeded" } } });
    pods.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    wait_for_object(&jobs, "deploy", "Job Complete", DEFAULT_TIMEOUT, |j| {
        j.status.as_ref().and_then(|s| s.succeeded) == Some(1)
    })
    .await?;
    env.cleanup().await?;
    Ok(())
}
