//! The floor's requests, sent by client tasks sharing one queue. What goes with each fleet's
//! pods (its NetworkPolicy and peer Service, which a correct operator has in place before the
//! pods run, then its StatefulSet) is applied once its create returned, and its other children
//! once a watch sees the StatefulSet ready: the control plane's Endpoints and EndpointSlices of
//! its public Service are then made once, with the running pods in them, rather than made empty
//! and rewritten as each pod starts. Its Ready status goes as soon as every child of the fleet
//! was applied. A Ready status due goes before anything else, then the children of fleets whose
//! pods run (nothing else holds those fleets back), then what goes with the next fleet's pods,
//! while fewer than [`STARTING_AT_ONCE`] fleets have pods starting. The statuses are written by
//! [`fleets`](crate::floor::fleets).

use super::children::Rendered;
use super::fleets::Fleets;
use super::queue::{Job, Queue};
use super::reads::FloorReads;
use crate::error::{Error, Result};
use crate::measure::readiness::statefulset_ready;
use crate::plane::identity::FIELD_MANAGER;
use crate::settings::{CONCURRENCY, STARTING_AT_ONCE};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Sends every request of the floor through `client`: the children from `incoming` (a fleet's
/// others once its StatefulSet is ready, its name from `statefulsets_ready`), and the Ready
/// status of each of `count` fleets (recorded in `fleets`) once its children are applied, its
/// nodes' states read through `reads` first. Returns when the last was answered.
pub async fn send(
    client: Client,
    reads: &FloorReads,
    incoming: UnboundedReceiver<Box<Rendered>>,
    count: usize,
    fleets: &Fleets,
    mut statefulsets_ready: UnboundedReceiver<String>,
) -> Result<()> {
    let (due, ready) = unbounded_channel();
    let (start, started) = unbounded_channel();
    let queue = Queue::new(incoming, started, ready, count, STARTING_AT_ONCE);
    let queue = &queue;
    // A StatefulSet seen ready releases its fleet's other children, and makes its Ready
    // status due when they are applied (the last of them does).
    let gate = {
        let due = due.clone();
        async move {
            while let Some(name) = statefulsets_ready.recv().await {
                if fleets.statefulset_ready(&name) {
                    let _ = due.send(name.clone());
                }
                let _ = start.send(name);
            }
        }
    };
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (client, due) = (client.clone(), due.clone());
            async move {
                while let Some(job) = queue.next().await {
                    match job {
                        Job::Apply(child) => {
                            let fleet = child.fleet.clone();
                            apply(&client, *child).await?;
                            if fleets.child_applied(&fleet) {
                                let _ = due.send(fleet);
                            }
                        }
                        Job::Ready(name) => fleets.write(&client, reads, &name).await?,
                    }
                }
                Ok::<_, Error>(())
            }
        })
        .collect();
    drop(due);
    let mut workers = std::pin::pin!(futures::future::try_join_all(workers));
    let finished = tokio::select! {
        result = &mut workers => Some(result),
        () = gate => None,
    };
    // When the watch ended first, the statuses it would have made due end in the caller's
    // timeout.
    match finished {
        Some(result) => result?,
        None => workers.await?,
    };
    Ok(())
}

/// Applies `child` once its name is free: an operator that never adopts an object it did not
/// create reads the name of each child its caches do not hold (every child of a new fleet)
/// before its first apply, as the operator's `fleet::name_claim` does.
async fn apply(client: &Client, child: Rendered) -> Result<()> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &child.namespace, &child.resource);
    let found = api
        .get_metadata_opt(&child.name)
        .await
        .map_err(Error::kube(format!(
            "reading {} {}",
            child.resource.kind, child.name
        )))?;
    if found.is_some() {
        return Err(Error::Manifest {
            what: format!("{} {}", child.resource.kind, child.name),
            detail:
                "it exists before the floor applied it: the bench's namespaces must start empty"
                    .into(),
        });
    }
    api.patch(
        &child.name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&child.body),
    )
    .await
    .map_err(Error::kube(format!(
        "applying {} {}",
        child.resource.kind, child.name
    )))?;
    Ok(())
}

/// How long the floor's watch may take to list the StatefulSets when it starts.
const WATCH_START: Duration = Duration::from_secs(60);

/// Watches the StatefulSets of every namespace through `client` and sends the name of
/// each the first time it is seen ready, until aborted (its StatefulSet has its fleet's name).
/// Returns once the watch has listed them, so its start, like the operator's, comes before the
/// clock and is not counted; `logs` is named when it does not start in time.
pub async fn watch_ready(
    client: Client,
    logs: PathBuf,
) -> Result<(UnboundedReceiver<String>, JoinHandle<()>)> {
    let (sender, receiver) = unbounded_channel();
    let (listed, started) = oneshot::channel();
    let api: Api<StatefulSet> = Api::all(client);
    let task = tokio::spawn(forward_ready(api, sender, listed));
    match tokio::time::timeout(WATCH_START, started).await {
        Ok(Ok(())) => Ok((receiver, task)),
        _ => {
            task.abort();
            Err(Error::Timeout {
                what: "the floor's watch of StatefulSets listing them".into(),
                seconds: WATCH_START.as_secs(),
                seen: "no list answered".into(),
                logs,
            })
        }
    }
}

async fn forward_ready(
    api: Api<StatefulSet>,
    sender: UnboundedSender<String>,
    listed: oneshot::Sender<()>,
) {
    let mut listed = Some(listed);
    let mut sent = HashSet::new();
    let mut events = watcher::watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::InitDone) => {
                if let Some(listed) = listed.take() {
                    let _ = listed.send(());
                }
            }
            Ok(Event::Apply(s) | Event::InitApply(s))
                if statefulset_ready(&s)
                    && sent.insert(s.name_any())
                    && sender.send(s.name_any()).is_err() =>
            {
                return;
            }
            _ => {}
        }
    }
}
