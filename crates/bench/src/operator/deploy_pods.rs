//! Plays the kubelet for the deploy Jobs the operator starts for fleets with spec.source: kwok
//! runs no container, so each deploy pod is ended as `celld deploy` would end it, with the
//! publish script's result in its termination message. The fleets' deployments are published
//! before they are created, so the pointer already names the version the "publish" gives.

use celld_testkit::{Completion, complete_pod};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use std::collections::HashSet;
use tokio::task::JoinHandle;

/// What the script writes when `celld deploy` succeeded.
const PUBLISHED: &str = r#"{"outcome":"Published"}"#;

/// Ends every running deploy pod (of every namespace) as published, until aborted.
pub fn start(client: Client) -> JoinHandle<()> {
    let pods: Api<Pod> = Api::all(client.clone());
    let config = watcher::Config::default().labels(&format!(
        "{}={}",
        celld_api::labels::ROLE,
        celld_api::labels::ROLE_DEPLOY
    ));
    tokio::spawn(async move {
        let mut done = HashSet::new();
        let mut changes = watcher(pods, config)
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(pod) = changes.next().await {
            let Ok(pod) = pod else { continue };
            let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
            if !running || !done.insert(pod.name_any()) {
                continue;
            }
            let name = pod.name_any();
            let pods: Api<Pod> =
                Api::namespaced(client.clone(), &pod.namespace().unwrap_or_default());
            tokio::spawn(async move {
                let published = Completion::succeeded().with_termination_message(PUBLISHED);
                if let Err(e) = complete_pod(&pods, &name, &published).await {
                    eprintln!("bench: completing the deploy pod {name} failed: {e}");
                }
            });
        }
    })
}
