//! The kubelet of the deploy pods, as the rollout tests play it (`play_publish`), for every
//! deploy pod at once: kwok runs no container, so as soon as a watch sees a deploy pod the
//! player does what `celld deploy` would in it and ends it. For a fleet's pod: the fleet's
//! pointer is written to name [`V2`] in its bucket prefix, the stand-in for the nodes' API is
//! told that fleet's pointer moved (its nodes take the version on their next reload), and the
//! pod is annotated for kwok to end it Succeeded with the script's result
//! (`{"outcome":"Published"}`) as its termination message, which kwok does once the pod runs.
//! For a pod of the floor's Jobs (labelled [`ROUND_LABEL`]) the same
//! write goes to a key of its own, and the pod ends the same way. Each pod is played in a task
//! of its own, and what was done when is kept for the report (the player's own share of a
//! wave's time).

use super::buckets::{BucketWriter, pointer_key};
use super::workload::{FleetBucket, V2, pointer_body, rollout_namespace};
use crate::error::{Error, Result};
use celld_api::labels;
use celld_fixtures::NodeDouble;
use celld_testkit::{COMPLETE_ANNOTATION, TERMINATION_MESSAGE_ANNOTATION};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::task::JoinHandle;

/// The label naming a floor Job's round, on the Job and its pod.
pub const ROUND_LABEL: &str = "bench.celld.dev/floor-round";

/// What the script writes when `celld deploy` succeeded.
const PUBLISHED: &str = r#"{"outcome":"Published"}"#;

/// What the player did with one deploy pod, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Play {
    /// The fleet it publishes to; None for a pod of the floor's Jobs.
    pub fleet: Option<String>,
    /// When the watch first saw it.
    pub seen: Instant,
    /// When its pointer was written.
    pub written: Option<Instant>,
    /// When its pointer was written, the nodes' stand-in told and the pod annotated to end.
    pub played: Option<Instant>,
    /// When the watch first saw it Succeeded.
    pub succeeded: Option<Instant>,
}

/// Every play so far, by `namespace/pod`, and the failures.
#[derive(Debug, Default)]
struct Plays {
    pods: HashMap<String, Play>,
    failures: Vec<String>,
}

type Shared = Arc<Mutex<Plays>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Plays> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the player writes for each pod.
#[derive(Clone)]
struct Stage {
    client: Client,
    fleets: Arc<HashMap<String, FleetBucket>>,
    floor: BucketWriter,
    nodes: NodeDouble,
    body: Arc<Vec<u8>>,
}

/// The player, running until dropped.
pub struct Player {
    plays: Shared,
    task: JoinHandle<()>,
}

impl Player {
    /// Starts playing every deploy pod of every namespace: a fleet's (in `fleets`, its bucket
    /// by name) and the floor's (their pointers in `floor`), telling `nodes` of each fleet's.
    pub fn start(
        client: Client,
        fleets: HashMap<String, FleetBucket>,
        floor: BucketWriter,
        nodes: NodeDouble,
    ) -> Result<Self> {
        let stage = Stage {
            client: client.clone(),
            fleets: Arc::new(fleets),
            floor,
            nodes,
            body: Arc::new(pointer_body(V2)?),
        };
        let plays = Shared::default();
        let shared = plays.clone();
        let pods: Api<Pod> = Api::all(client);
        let config =
            watcher::Config::default().labels(&format!("{}={}", labels::ROLE, labels::ROLE_DEPLOY));
        let task = tokio::spawn(async move {
            let mut changes = watcher(pods, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(pod) = changes.next().await {
                let Ok(pod) = pod else { continue };
                seen(&shared, &stage, &pod);
            }
        });
        Ok(Player { plays, task })
    }

    /// Every pod played so far.
    pub fn plays(&self) -> Vec<Play> {
        lock(&self.plays).pods.values().cloned().collect()
    }

    /// The plays of pods of the namespace `namespace` whose name starts with `prefix`.
    pub fn plays_of(&self, namespace: &str, prefix: &str) -> Vec<Play> {
        let key = format!("{namespace}/{prefix}");
        lock(&self.plays)
            .pods
            .iter()
            .filter(|(k, _)| k.starts_with(&key))
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// An error for the first pod the player could not play, if any.
    pub fn failed(&self) -> Result<()> {
        match lock(&self.plays).failures.first() {
            None => Ok(()),
            Some(detail) => Err(Error::Process {
                what: "the bench's stand-in for the deploy pods".into(),
                detail: detail.clone(),
            }),
        }
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Records what the watch saw of `pod` and starts its play the first time.
fn seen(shared: &Shared, stage: &Stage, pod: &Pod) {
    let now = Instant::now();
    let namespace = pod.namespace().unwrap_or_default();
    let key = format!("{namespace}/{}", pod.name_any());
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let mut plays = lock(shared);
    if let Some(play) = plays.pods.get_mut(&key) {
        if phase == Some("Succeeded") && play.succeeded.is_none() {
            play.succeeded = Some(now);
        }
        return;
    }
    if pod.metadata.deletion_timestamp.is_some() || matches!(phase, Some("Succeeded" | "Failed")) {
        return;
    }
    let fleet = pod.labels().get(labels::FLEET).cloned();
    let target = if namespace != rollout_namespace() {
        None
    } else if pod.labels().contains_key(ROUND_LABEL) {
        let job = pod
            .labels()
            .get("batch.kubernetes.io/job-name")
            .cloned()
            .unwrap_or_else(|| pod.name_any());
        Some((stage.floor.clone(), format!("floor/{job}"), None))
    } else {
        fleet
            .as_ref()
            .and_then(|f| stage.fleets.get(f).map(|b| (f, b)))
            .map(|(f, b)| (b.writer.clone(), b.prefix.clone(), Some(f.clone())))
    };
    let Some((writer, prefix, fleet)) = target else {
        return;
    };
    plays.pods.insert(
        key.clone(),
        Play {
            fleet: fleet.clone(),
            seen: now,
            written: None,
            played: None,
            succeeded: None,
        },
    );
    drop(plays);
    let (shared, stage, name) = (shared.clone(), stage.clone(), pod.name_any());
    tokio::spawn(async move {
        let result = play(
            &stage,
            &writer,
            &prefix,
            fleet.as_deref(),
            &namespace,
            &name,
        )
        .await;
        let mut plays = lock(&shared);
        match result {
            Ok(written) => {
                if let Some(p) = plays.pods.get_mut(&key) {
                    p.written = Some(written);
                    p.played = Some(Instant::now());
                }
            }
            Err(e) => plays.failures.push(format!("pod {key}: {e}")),
        }
    });
}

/// Writes the pointer under `prefix`, tells the nodes' stand-in of `fleet`'s, and annotates
/// the pod `namespace/name` to end Succeeded with the script's result; returns when the
/// pointer was written.
async fn play(
    stage: &Stage,
    writer: &BucketWriter,
    prefix: &str,
    fleet: Option<&str>,
    namespace: &str,
    name: &str,
) -> Result<Instant> {
    writer
        .put(&pointer_key(prefix), stage.body.as_ref().clone())
        .await?;
    let written = Instant::now();
    if let Some(fleet) = fleet {
        stage.nodes.publish_to(fleet, V2);
    }
    let patch = json!({"metadata": {"annotations": {
        COMPLETE_ANNOTATION: "Succeeded",
        TERMINATION_MESSAGE_ANNOTATION: PUBLISHED,
    }}});
    Api::<Pod>::namespaced(stage.client.clone(), namespace)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(Error::kube(format!(
            "ending the deploy pod {namespace}/{name}"
        )))?;
    Ok(written)
}
