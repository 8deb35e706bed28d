//! The floor's requests, sent by client tasks sharing one queue: every child applied once its
//! fleet's create returned, and one status per fleet as soon as a watch sees its StatefulSet
//! ready. A status waiting goes before the next apply (nothing else holds that fleet back),
//! and the nodes' own children (their peer Service, which names them, and their StatefulSet)
//! before the others (a fleet's pods, so its readiness, wait for nothing else).

use crate::error::{Error, Result};
use crate::floor_children::Rendered;
use crate::floor_status::ready_status;
use crate::identity::FIELD_MANAGER;
use crate::readiness::statefulset_ready;
use crate::settings::{CONCURRENCY, FLEET_NAMESPACE};
use celld_api::CelldFleet;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// One request of the floor.
#[derive(Debug)]
enum Job {
    /// Apply one child.
    Apply(Rendered),
    /// Write the Ready status of the fleet of this name.
    Status(String),
}

/// What is left to send, taken by one client task at a time.
struct Queue(tokio::sync::Mutex<Left>);

/// The requests not handed out yet.
struct Left {
    /// The children of the fleets created so far, as they come; closed once every fleet was
    /// created and its children sent.
    incoming: UnboundedReceiver<Rendered>,
    /// Whether `incoming` is closed and empty.
    created_all: bool,
    /// The nodes' own children not applied yet (peer Services and StatefulSets), in order: they
    /// go first, as a fleet's pods and so its readiness wait for nothing else.
    nodes: VecDeque<Rendered>,
    /// The other children not applied yet, in order.
    others: VecDeque<Rendered>,
    /// The fleets whose StatefulSet a watch saw ready, in that order.
    ready: UnboundedReceiver<String>,
    /// Statuses not handed out yet.
    statuses: usize,
}

impl Left {
    /// Sorts `child` into the nodes' own or the others.
    fn sort(&mut self, child: Rendered) {
        if child.nodes {
            self.nodes.push_back(child);
        } else {
            self.others.push_back(child);
        }
    }

    /// The next child to apply of those that came in: the nodes' own before any other.
    fn next_child(&mut self) -> Option<Rendered> {
        while let Ok(child) = self.incoming.try_recv() {
            self.sort(child);
        }
        self.nodes.pop_front().or_else(|| self.others.pop_front())
    }
}

impl Queue {
    fn new(
        incoming: UnboundedReceiver<Rendered>,
        ready: UnboundedReceiver<String>,
        statuses: usize,
    ) -> Self {
        Queue(tokio::sync::Mutex::new(Left {
            incoming,
            created_all: false,
            nodes: VecDeque::new(),
            others: VecDeque::new(),
            ready,
            statuses,
        }))
    }

    /// The next request: a status waiting, else the nodes' next child, else the next other
    /// child, else whichever comes first of a child and a StatefulSet ready; `None` when every
    /// request was handed out (or the watch ended).
    async fn next(&self) -> Option<Job> {
        let mut left = self.0.lock().await;
        let left = &mut *left;
        if left.statuses > 0
            && let Ok(name) = left.ready.try_recv()
        {
            left.statuses -= 1;
            return Some(Job::Status(name));
        }
        if let Some(child) = left.next_child() {
            return Some(Job::Apply(child));
        }
        while !left.created_all {
            tokio::select! {
                biased;
                name = left.ready.recv(), if left.statuses > 0 => {
                    let name = name?;
                    left.statuses -= 1;
                    return Some(Job::Status(name));
                }
                child = left.incoming.recv() => match child {
                    Some(child) => return Some(Job::Apply(child)),
                    None => left.created_all = true,
                },
            }
        }
        if left.statuses == 0 {
            return None;
        }
        let name = left.ready.recv().await?;
        left.statuses -= 1;
        Some(Job::Status(name))
    }
}

/// The generation of each fleet created so far, by name, for its status.
pub type Generations = Mutex<HashMap<String, Option<i64>>>;

/// Records `fleet`'s generation in `generations`.
pub fn created(generations: &Generations, fleet: &CelldFleet) {
    generations
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(fleet.name_any(), fleet.metadata.generation);
}

/// Sends every request of the floor through `client`: the children from `applies`, and the
/// status of each of `fleets` fleets once its StatefulSet is ready (with its generation from
/// `generations`). Returns when the last was answered.
pub async fn send(
    client: Client,
    applies: UnboundedReceiver<Rendered>,
    fleets: usize,
    generations: &Generations,
    ready: UnboundedReceiver<String>,
) -> Result<()> {
    let queue = Queue::new(applies, ready, fleets);
    let queue = &queue;
    let workers = (0..CONCURRENCY).map(|_| {
        let client = client.clone();
        async move {
            while let Some(job) = queue.next().await {
                match job {
                    Job::Apply(child) => apply(&client, child).await?,
                    Job::Status(name) => {
                        let generation = generations
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get(&name)
                            .copied()
                            .flatten();
                        write_status(&client, &name, generation).await?;
                    }
                }
            }
            Ok::<_, Error>(())
        }
    });
    futures::future::try_join_all(workers).await?;
    Ok(())
}

async fn apply(client: &Client, child: Rendered) -> Result<()> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), FLEET_NAMESPACE, &child.resource);
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

async fn write_status(client: &Client, name: &str, generation: Option<i64>) -> Result<()> {
    let api: Api<CelldFleet> = Api::namespaced(client.clone(), FLEET_NAMESPACE);
    api.patch_status(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&ready_status(name, generation)),
    )
    .await
    .map_err(Error::kube(format!("writing the status of fleet {name}")))?;
    Ok(())
}

/// How long the floor's watch may take to list the StatefulSets when it starts.
const WATCH_START: Duration = Duration::from_secs(60);

/// Watches the StatefulSets of the bench's namespace through `client` and sends the name of
/// each the first time it is seen ready, until aborted (its StatefulSet has its fleet's name).
/// Returns once the watch has listed them, so its start, like the operator's, comes before the
/// clock and is not counted; `logs` is named when it does not start in time.
pub async fn watch_ready(
    client: Client,
    logs: PathBuf,
) -> Result<(UnboundedReceiver<String>, JoinHandle<()>)> {
    let (sender, receiver) = unbounded_channel();
    let (listed, started) = oneshot::channel();
    let api: Api<StatefulSet> = Api::namespaced(client, FLEET_NAMESPACE);
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

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ApiResource;

    fn child(name: &str) -> Rendered {
        Rendered {
            resource: ApiResource::erase::<StatefulSet>(&()),
            name: name.into(),
            body: serde_json::Value::Null,
            nodes: true,
        }
    }

    fn service(name: &str) -> Rendered {
        Rendered {
            resource: ApiResource::erase::<k8s_openapi::api::core::v1::Service>(&()),
            name: name.into(),
            body: serde_json::Value::Null,
            nodes: false,
        }
    }

    fn queue(children: &[&str], statuses: usize) -> (Queue, UnboundedSender<String>) {
        let (applies, receiver) = unbounded_channel();
        for c in children {
            applies.send(child(c)).unwrap();
        }
        let (sender, ready) = unbounded_channel();
        (Queue::new(receiver, ready, statuses), sender)
    }

    fn describe(job: Option<Job>) -> String {
        match job {
            Some(Job::Apply(c)) => format!("apply {}", c.name),
            Some(Job::Status(n)) => format!("status {n}"),
            None => "done".into(),
        }
    }

    #[tokio::test]
    async fn a_ready_fleets_status_goes_before_the_next_apply() {
        let (q, ready) = queue(&["a", "b"], 2);
        assert_eq!(describe(q.next().await), "apply a");
        ready.send("f0".into()).unwrap();
        assert_eq!(describe(q.next().await), "status f0");
        assert_eq!(describe(q.next().await), "apply b");
        // Nothing to apply: wait for the next ready StatefulSet.
        let later = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ready.send("f1".into()).unwrap();
            ready
        });
        assert_eq!(describe(q.next().await), "status f1");
        assert_eq!(describe(q.next().await), "done", "every status handed out");
        drop(later.await.unwrap());
    }

    #[tokio::test]
    async fn a_child_of_a_fleet_created_later_is_applied_before_a_status_to_come() {
        let (applies, receiver) = unbounded_channel();
        let (ready, statuses) = unbounded_channel();
        let q = Queue::new(receiver, statuses, 1);
        let later = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            applies.send(child("b")).unwrap();
            drop(applies);
            tokio::time::sleep(Duration::from_millis(50)).await;
            ready.send("f0".into()).unwrap();
            ready
        });
        assert_eq!(describe(q.next().await), "apply b");
        assert_eq!(describe(q.next().await), "status f0");
        assert_eq!(describe(q.next().await), "done");
        drop(later.await.unwrap());
    }

    #[tokio::test]
    async fn the_nodes_children_go_before_the_others_that_came_in() {
        let (applies, receiver) = unbounded_channel();
        for c in [service("s0"), child("a"), service("s1"), child("b")] {
            applies.send(c).unwrap();
        }
        drop(applies);
        let (_ready, statuses) = unbounded_channel::<String>();
        let q = Queue::new(receiver, statuses, 0);
        let mut order = Vec::new();
        while let Some(job) = q.next().await {
            order.push(describe(Some(job)));
        }
        assert_eq!(order, ["apply a", "apply b", "apply s0", "apply s1"]);
    }

    #[tokio::test]
    async fn the_queue_ends_when_the_watch_does() {
        let (q, ready) = queue(&[], 3);
        drop(ready);
        assert_eq!(describe(q.next().await), "done");
    }
}
