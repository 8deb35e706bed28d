//! The floor's queue of requests, shared by its client tasks: a Ready status due first, then
//! the children of fleets whose pods run, then what goes with the next fleet's pods (its
//! NetworkPolicy, peer Service and StatefulSet) while fewer than a window of fleets have pods
//! starting; a fleet's other children wait until a watch sees its StatefulSet ready.

use super::children::Rendered;
use k8s_openapi::api::apps::v1::StatefulSet;
use std::collections::{HashMap, HashSet, VecDeque};
use tokio::sync::mpsc::UnboundedReceiver;

/// One request of the floor.
#[derive(Debug)]
pub enum Job {
    /// Apply one child.
    Apply(Box<Rendered>),
    /// Write the Ready status of the fleet of this name.
    Ready(String),
}

/// What is left to send, taken by one client task at a time.
pub struct Queue(tokio::sync::Mutex<Left>);

/// The requests not handed out yet.
struct Left {
    /// The fleets' children, as their creates return; closed once every fleet was created and
    /// its children sent.
    incoming: UnboundedReceiver<Box<Rendered>>,
    /// Whether `incoming` is closed and empty.
    created_all: bool,
    /// What goes with the fleets' pods ([`Rendered::with_pods`]) not applied yet, in the order
    /// it came in.
    with_pods: VecDeque<Box<Rendered>>,
    /// The other children of each fleet whose StatefulSet was not seen ready yet.
    held: HashMap<String, Vec<Rendered>>,
    /// The fleets whose StatefulSet was seen ready.
    running: HashSet<String>,
    /// The fleets whose StatefulSet was handed out and not seen ready yet: their pods are
    /// starting.
    starting: HashSet<String>,
    /// How many fleets may have pods starting at once; the next StatefulSet waits below it.
    window: usize,
    /// The other children of fleets whose StatefulSet was seen ready, in that order.
    released: VecDeque<Box<Rendered>>,
    /// The fleets whose StatefulSet a watch saw ready, in that order.
    started: UnboundedReceiver<String>,
    /// The fleets whose Ready status is due, in that order.
    ready: UnboundedReceiver<String>,
    /// Ready statuses not handed out yet.
    statuses: usize,
}

impl Left {
    /// Sorts `child` into what goes with the pods, the children held, or those released.
    fn sort(&mut self, child: Box<Rendered>) {
        if child.with_pods {
            self.with_pods.push_back(child);
        } else if self.running.contains(&child.fleet) {
            self.released.push_back(child);
        } else {
            self.held
                .entry(child.fleet.clone())
                .or_default()
                .push(*child);
        }
    }

    /// Releases the children held for `fleet`, whose StatefulSet was seen ready.
    fn release(&mut self, fleet: String) {
        self.released
            .extend(self.held.remove(&fleet).into_iter().flatten().map(Box::new));
        self.starting.remove(&fleet);
        self.running.insert(fleet);
    }

    /// The next child that goes with a fleet's pods, while fewer than `window` fleets have pods
    /// starting.
    fn next_with_pods(&mut self) -> Option<Box<Rendered>> {
        if self.starting.len() >= self.window {
            return None;
        }
        let next = self.with_pods.pop_front()?;
        if next.resource.kind == <StatefulSet as k8s_openapi::Resource>::KIND
            && !self.running.contains(&next.fleet)
        {
            self.starting.insert(next.fleet.clone());
        }
        Some(next)
    }

    /// Sorts what came in without waiting, then hands out the first request due, if any.
    fn next_now(&mut self) -> Option<Job> {
        while let Ok(child) = self.incoming.try_recv() {
            self.sort(child);
        }
        while let Ok(fleet) = self.started.try_recv() {
            self.release(fleet);
        }
        if self.statuses > 0
            && let Ok(name) = self.ready.try_recv()
        {
            self.statuses -= 1;
            return Some(Job::Ready(name));
        }
        self.released
            .pop_front()
            .or_else(|| self.next_with_pods())
            .map(Job::Apply)
    }
}

impl Queue {
    pub fn new(
        incoming: UnboundedReceiver<Box<Rendered>>,
        started: UnboundedReceiver<String>,
        ready: UnboundedReceiver<String>,
        statuses: usize,
        window: usize,
    ) -> Self {
        Queue(tokio::sync::Mutex::new(Left {
            incoming,
            created_all: false,
            with_pods: VecDeque::new(),
            held: HashMap::new(),
            running: HashSet::new(),
            starting: HashSet::new(),
            window,
            released: VecDeque::new(),
            started,
            ready,
            statuses,
        }))
    }

    /// The next request: a Ready status due, else the next child of a fleet whose StatefulSet
    /// is ready, else the next that goes with a fleet's pods (while the window allows), else the
    /// first of these to come; `None` when every
    /// Ready status was handed out (the last request), or when the watches ended first.
    pub async fn next(&self) -> Option<Job> {
        let mut left = self.0.lock().await;
        let left = &mut *left;
        loop {
            if let Some(job) = left.next_now() {
                return Some(job);
            }
            if left.statuses == 0 {
                return None;
            }
            tokio::select! {
                biased;
                name = left.ready.recv() => {
                    let name = name?;
                    left.statuses -= 1;
                    return Some(Job::Ready(name));
                }
                fleet = left.started.recv() => left.release(fleet?),
                child = left.incoming.recv(), if !left.created_all => match child {
                    Some(child) => left.sort(child),
                    None => left.created_all = true,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Service;
    use kube::api::ApiResource;
    use std::time::Duration;
    use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

    fn rendered<K: kube::Resource<DynamicType = ()>>(
        fleet: &str,
        name: &str,
        with_pods: bool,
    ) -> Box<Rendered> {
        Box::new(Rendered {
            resource: ApiResource::erase::<K>(&()),
            name: name.into(),
            namespace: "bench-0".into(),
            body: serde_json::Value::Null,
            fleet: fleet.into(),
            with_pods,
        })
    }

    /// A fleet's children in the order they are rendered: its peer Service and StatefulSet,
    /// which go with its pods, then its public Service.
    fn fleet(name: &str) -> [Box<Rendered>; 3] {
        [
            rendered::<Service>(name, &format!("{name}-peer"), true),
            rendered::<StatefulSet>(name, name, true),
            rendered::<Service>(name, name, false),
        ]
    }

    struct Feeds {
        children: UnboundedSender<Box<Rendered>>,
        started: UnboundedSender<String>,
        ready: UnboundedSender<String>,
    }

    fn queue(fleets: &[&str], statuses: usize) -> (Queue, Feeds) {
        windowed(fleets, statuses, usize::MAX)
    }

    fn windowed(fleets: &[&str], statuses: usize, window: usize) -> (Queue, Feeds) {
        let (children, incoming) = unbounded_channel();
        for f in fleets {
            for c in fleet(f) {
                children.send(c).unwrap();
            }
        }
        let (started, started_rx) = unbounded_channel();
        let (ready, ready_rx) = unbounded_channel();
        let q = Queue::new(incoming, started_rx, ready_rx, statuses, window);
        (
            q,
            Feeds {
                children,
                started,
                ready,
            },
        )
    }

    fn describe(job: Option<Job>) -> String {
        match job {
            Some(Job::Apply(c)) => format!("apply {} {}", c.resource.kind, c.name),
            Some(Job::Ready(n)) => format!("status {n}"),
            None => "done".into(),
        }
    }

    /// What `q` hands out until it would wait.
    async fn now(q: &Queue) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(job) = tokio::time::timeout(Duration::from_millis(50), q.next()).await {
            let done = job.is_none();
            out.push(describe(job));
            if done {
                break;
            }
        }
        out
    }

    #[tokio::test]
    async fn what_goes_with_the_pods_goes_first_and_the_other_children_once_they_run() {
        let (q, feeds) = queue(&["a", "b"], 2);
        assert_eq!(
            now(&q).await,
            [
                "apply Service a-peer",
                "apply StatefulSet a",
                "apply Service b-peer",
                "apply StatefulSet b"
            ],
            "the public Services wait for their fleet's pods"
        );
        feeds.started.send("b".into()).unwrap();
        assert_eq!(now(&q).await, ["apply Service b"]);
        for c in fleet("c") {
            feeds.children.send(c).unwrap();
        }
        feeds.started.send("a".into()).unwrap();
        assert_eq!(
            now(&q).await,
            [
                "apply Service a",
                "apply Service c-peer",
                "apply StatefulSet c"
            ],
            "a running fleet's children go before the next fleet's pods"
        );
    }

    #[tokio::test]
    async fn a_ready_status_goes_before_anything_else_and_the_last_ends_the_queue() {
        let (q, feeds) = queue(&["a", "b"], 2);
        feeds.started.send("a".into()).unwrap();
        feeds.ready.send("x".into()).unwrap();
        assert_eq!(
            now(&q).await,
            [
                "status x",
                "apply Service a",
                "apply Service a-peer",
                "apply StatefulSet a",
                "apply Service b-peer",
                "apply StatefulSet b"
            ]
        );
        // Nothing to hand out: the queue waits for the next Ready status due.
        let later = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            feeds.ready.send("y".into()).unwrap();
            feeds
        });
        assert_eq!(describe(q.next().await), "status y");
        assert_eq!(
            describe(q.next().await),
            "done",
            "every status handed out, though b's public Service was never released"
        );
        drop(later.await.unwrap());
    }

    #[tokio::test]
    async fn children_of_a_fleet_seen_running_before_they_came_in_are_not_held() {
        let (q, feeds) = queue(&[], 1);
        feeds.started.send("a".into()).unwrap();
        assert!(now(&q).await.is_empty());
        for c in fleet("a") {
            feeds.children.send(c).unwrap();
        }
        assert_eq!(
            now(&q).await,
            [
                "apply Service a",
                "apply Service a-peer",
                "apply StatefulSet a"
            ]
        );
    }

    #[tokio::test]
    async fn the_next_statefulset_waits_while_the_window_is_full() {
        let (q, feeds) = windowed(&["a", "b", "c"], 3, 2);
        assert_eq!(
            now(&q).await,
            [
                "apply Service a-peer",
                "apply StatefulSet a",
                "apply Service b-peer",
                "apply StatefulSet b"
            ],
            "two fleets may start at once"
        );
        feeds.started.send("b".into()).unwrap();
        let after_b = now(&q).await;
        assert_eq!(
            after_b.last().map(String::as_str),
            Some("apply StatefulSet c"),
            "a fleet running makes room for the next: {after_b:?}"
        );
        // A StatefulSet seen ready twice frees one place only.
        feeds.started.send("b".into()).unwrap();
        for c in fleet("d") {
            feeds.children.send(c).unwrap();
        }
        assert!(now(&q).await.is_empty(), "a and c are still starting");
    }

    #[tokio::test]
    async fn the_queue_ends_when_the_watch_does() {
        let (q, feeds) = queue(&["a"], 3);
        assert_eq!(
            now(&q).await,
            ["apply Service a-peer", "apply StatefulSet a"]
        );
        drop(feeds.started);
        assert_eq!(describe(q.next().await), "done");
    }
}
