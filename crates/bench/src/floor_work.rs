//! The floor's requests, sent by client tasks sharing one queue: every child applied once its
//! fleet's create returned, then the fleet's status at creation (on its way), and its Ready
//! status as soon as a watch sees its StatefulSet ready and every child of the fleet was
//! applied (whichever comes last). A Ready status waiting goes before the next apply (nothing
//! else holds that fleet back), and the nodes' own children (their peer Service, which names
//! them, and their StatefulSet) before the others (a fleet's pods, so its readiness, wait for
//! nothing else). The statuses are written by [`floor_fleets`](crate::floor_fleets).

use crate::error::{Error, Result};
use crate::floor_children::Rendered;
use crate::floor_fleets::Fleets;
use crate::identity::FIELD_MANAGER;
use crate::readiness::statefulset_ready;
use crate::settings::CONCURRENCY;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// One request of the floor.
#[derive(Debug)]
pub enum Job {
    /// Apply one child.
    Apply(Box<Rendered>),
    /// Write the status at creation of the fleet of this name, unless its Ready status was
    /// written first.
    Created(String),
    /// Write the Ready status of the fleet of this name.
    Ready(String),
}

/// What is left to send, taken by one client task at a time.
struct Queue(tokio::sync::Mutex<Left>);

/// The requests not handed out yet.
struct Left {
    /// The fleets' children and statuses at creation, as their creates return; closed once
    /// every fleet was created and its requests sent.
    incoming: UnboundedReceiver<Job>,
    /// Whether `incoming` is closed and empty.
    created_all: bool,
    /// The nodes' own children not applied yet (peer Services and StatefulSets), in order: they
    /// go first, as a fleet's pods and so its readiness wait for nothing else.
    nodes: VecDeque<Job>,
    /// The other children and statuses at creation not sent yet, in order.
    others: VecDeque<Job>,
    /// The fleets whose StatefulSet a watch saw ready, in that order.
    ready: UnboundedReceiver<String>,
    /// Ready statuses not handed out yet.
    statuses: usize,
}

impl Left {
    /// Sorts `job` into the nodes' own or the others.
    fn sort(&mut self, job: Job) {
        match job {
            Job::Apply(child) if child.nodes => self.nodes.push_back(Job::Apply(child)),
            job => self.others.push_back(job),
        }
    }

    /// The next of the requests that came in: the nodes' own children before any other.
    fn next_incoming(&mut self) -> Option<Job> {
        while let Ok(job) = self.incoming.try_recv() {
            self.sort(job);
        }
        self.nodes.pop_front().or_else(|| self.others.pop_front())
    }
}

impl Queue {
    fn new(
        incoming: UnboundedReceiver<Job>,
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

    /// The next request: a Ready status waiting, else the nodes' next child, else the next
    /// other request that came in, else whichever comes first of a request coming in and a
    /// StatefulSet ready; `None` when every request was handed out (or the watch ended).
    async fn next(&self) -> Option<Job> {
        let mut left = self.0.lock().await;
        let left = &mut *left;
        if left.statuses > 0
            && let Ok(name) = left.ready.try_recv()
        {
            left.statuses -= 1;
            return Some(Job::Ready(name));
        }
        if let Some(job) = left.next_incoming() {
            return Some(job);
        }
        while !left.created_all {
            tokio::select! {
                biased;
                name = left.ready.recv(), if left.statuses > 0 => {
                    let name = name?;
                    left.statuses -= 1;
                    return Some(Job::Ready(name));
                }
                job = left.incoming.recv() => match job {
                    Some(job) => return Some(job),
                    None => left.created_all = true,
                },
            }
        }
        if left.statuses == 0 {
            return None;
        }
        let name = left.ready.recv().await?;
        left.statuses -= 1;
        Some(Job::Ready(name))
    }
}

/// Sends every request of the floor through `client`: the children and statuses at creation
/// from `incoming`, and the Ready status of each of `count` fleets (recorded in `fleets`) once
/// its StatefulSet is ready (its name from `statefulsets_ready`) and its children are applied.
/// Returns when the last was answered.
pub async fn send(
    client: Client,
    incoming: UnboundedReceiver<Job>,
    count: usize,
    fleets: &Fleets,
    mut statefulsets_ready: UnboundedReceiver<String>,
) -> Result<()> {
    let (due, ready) = unbounded_channel();
    let queue = Queue::new(incoming, ready, count);
    let queue = &queue;
    // A StatefulSet seen ready makes its fleet's Ready status due when its children are
    // applied; otherwise the last of them does.
    let gate = {
        let due = due.clone();
        async move {
            while let Some(name) = statefulsets_ready.recv().await {
                if fleets.statefulset_ready(&name) {
                    let _ = due.send(name);
                }
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
                        Job::Created(name) => fleets.write(&client, &name, false).await?,
                        Job::Ready(name) => fleets.write(&client, &name, true).await?,
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

async fn apply(client: &Client, child: Rendered) -> Result<()> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &child.namespace, &child.resource);
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

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ApiResource;

    fn child(name: &str) -> Job {
        Job::Apply(Box::new(Rendered {
            resource: ApiResource::erase::<StatefulSet>(&()),
            name: name.into(),
            namespace: "bench-0".into(),
            body: serde_json::Value::Null,
            fleet: name.into(),
            nodes: true,
        }))
    }

    fn service(name: &str) -> Job {
        Job::Apply(Box::new(Rendered {
            resource: ApiResource::erase::<k8s_openapi::api::core::v1::Service>(&()),
            name: name.into(),
            namespace: "bench-0".into(),
            body: serde_json::Value::Null,
            fleet: name.into(),
            nodes: false,
        }))
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
            Some(Job::Created(n)) => format!("created {n}"),
            Some(Job::Ready(n)) => format!("status {n}"),
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
        for c in [
            service("s0"),
            child("a"),
            Job::Created("a".into()),
            service("s1"),
            child("b"),
            Job::Created("b".into()),
        ] {
            applies.send(c).unwrap();
        }
        drop(applies);
        let (_ready, statuses) = unbounded_channel::<String>();
        let q = Queue::new(receiver, statuses, 0);
        let mut order = Vec::new();
        while let Some(job) = q.next().await {
            order.push(describe(Some(job)));
        }
        assert_eq!(
            order,
            [
                "apply a",
                "apply b",
                "apply s0",
                "created a",
                "apply s1",
                "created b"
            ]
        );
    }

    #[tokio::test]
    async fn the_queue_ends_when_the_watch_does() {
        let (q, ready) = queue(&[], 3);
        drop(ready);
        assert_eq!(describe(q.next().await), "done");
    }
}
