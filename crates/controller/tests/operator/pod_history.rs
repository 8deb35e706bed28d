//! Every state a fleet's pods went through, recorded from a watch: what tests of upgrades check
//! their invariants on (never two versions side by side, one node at a time).

use celld_testkit::{TestEnv, is_running_and_ready};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher::{self, Event};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// One pod as seen at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSeen {
    /// The celld container's image.
    pub image: String,
    /// Running and Ready, not terminating.
    pub serving: bool,
    /// Deleted, still terminating.
    pub terminating: bool,
}

/// The fleet's pods (name → state) after each change.
pub type Snapshot = BTreeMap<String, PodSeen>;

/// A running recording.
pub struct PodHistory {
    snapshots: Arc<Mutex<Vec<(Instant, Snapshot)>>>,
    task: JoinHandle<()>,
}

fn seen(pod: &Pod) -> PodSeen {
    let image = pod
        .spec
        .as_ref()
        .and_then(|s| s.containers.iter().find(|c| c.name == "celld"))
        .and_then(|c| c.image.clone())
        .unwrap_or_default();
    let terminating = pod.metadata.deletion_timestamp.is_some();
    PodSeen {
        image,
        serving: !terminating && is_running_and_ready(pod),
        terminating,
    }
}

impl PodHistory {
    /// Starts recording the pods matching `selector` in the test namespace.
    pub async fn record(env: &TestEnv, selector: &str) -> Self {
        let snapshots = Arc::new(Mutex::new(Vec::new()));
        let stream = watcher::watcher(
            env.api::<Pod>(),
            watcher::Config::default().labels(selector),
        );
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let into = snapshots.clone();
        let task = tokio::spawn(async move {
            let mut ready_tx = Some(ready_tx);
            let mut pods = Snapshot::new();
            let mut init = Snapshot::new();
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Event::Apply(pod)) => {
                        pods.insert(pod.metadata.name.clone().unwrap_or_default(), seen(&pod));
                    }
                    Ok(Event::Delete(pod)) => {
                        pods.remove(pod.metadata.name.as_deref().unwrap_or_default());
                    }
                    Ok(Event::Init) => {
                        init.clear();
                        continue;
                    }
                    Ok(Event::InitApply(pod)) => {
                        init.insert(pod.metadata.name.clone().unwrap_or_default(), seen(&pod));
                        continue;
                    }
                    Ok(Event::InitDone) => {
                        pods = std::mem::take(&mut init);
                        if let Some(tx) = ready_tx.take() {
                            let _ = tx.send(());
                        }
                    }
                    Err(_) => continue,
                }
                into.lock()
                    .expect("pod history")
                    .push((Instant::now(), pods.clone()));
            }
        });
        ready_rx.await.expect("the pod watch starts");
        Self { snapshots, task }
    }

    /// Every snapshot recorded so far.
    pub fn snapshots(&self) -> Vec<Snapshot> {
        let snapshots = self.snapshots.lock().expect("pod history");
        snapshots.iter().map(|(_, s)| s.clone()).collect()
    }

    /// How long the fleet had no pod between the last one of `old` and the first of `new`.
    pub fn empty_between(&self, old: &str, new: &str) -> Option<Duration> {
        let snapshots = self.snapshots.lock().expect("pod history");
        let has = |s: &Snapshot, image: &str| s.values().any(|p| p.image == image);
        let first_new = snapshots.iter().position(|(_, s)| has(s, new))?;
        let last_old = snapshots[..first_new]
            .iter()
            .rposition(|(_, s)| has(s, old))?;
        let emptied = snapshots[last_old + 1..first_new]
            .iter()
            .find(|(_, s)| s.is_empty())?
            .0;
        Some(snapshots[first_new].0.duration_since(emptied))
    }
}

impl Drop for PodHistory {
    fn drop(&mut self) {
        self.task.abort();
    }
}
