//! `logs --follow`: stream every node pod at once and pick up pods that start later (a scale-up,
//! a replaced pod, a restarted container), resuming without repeating lines already shown.

use super::selection::Selection;
use super::stream::{self, Line, Options};
use crate::cluster::kubeconfig::Target;
use crate::error::{Error, Result, status_code};
use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::runtime::watcher;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use tokio::sync::mpsc;

/// Whether a pod's container has started, so its log can be read.
pub fn started(pod: &Pod) -> bool {
    container_state(pod, |s| s.running.is_some() || s.terminated.is_some())
}

/// Whether a pod's container runs now (its log may grow).
pub fn running(pod: &Pod) -> bool {
    container_state(pod, |s| s.running.is_some())
}

fn container_state(
    pod: &Pod,
    pred: impl Fn(&k8s_openapi::api::core::v1::ContainerState) -> bool,
) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.state.as_ref().is_some_and(&pred)))
}

/// A pod being (or having been) streamed.
struct Tracked {
    /// The latest version of the pod.
    pod: Pod,
    /// A stream is open.
    active: bool,
    /// When the last stream ended; the next one starts there.
    ended: Option<Timestamp>,
}

/// The watcher's state: which pods stream, which were there from the start.
struct Follower {
    client: Client,
    options: Options,
    tx: mpsc::Sender<Line>,
    done: mpsc::UnboundedSender<(String, Timestamp)>,
    tracked: HashMap<String, Tracked>,
    /// Pods already running when the command started: shown with --tail, later ones in full.
    initial: HashSet<String>,
    initializing: bool,
}

impl Follower {
    fn seen(&mut self, pod: Pod) {
        let Some(uid) = pod.metadata.uid.clone() else {
            return;
        };
        if self.initializing && started(&pod) {
            self.initial.insert(uid.clone());
        }
        let entry = self.tracked.entry(uid.clone()).or_insert(Tracked {
            pod: pod.clone(),
            active: false,
            ended: None,
        });
        entry.pod = pod;
        self.maybe_start(&uid, Duration::ZERO);
    }

    fn ended(&mut self, uid: String, at: Timestamp) {
        let Some(t) = self.tracked.get_mut(&uid) else {
            return;
        };
        t.active = false;
        t.ended = Some(at);
        // A stream of a running container ended (an API server timeout, say): resume it.
        if running(&t.pod) {
            self.maybe_start(&uid, Duration::from_secs(1));
        }
    }

    fn maybe_start(&mut self, uid: &str, delay: Duration) {
        let Some(t) = self.tracked.get_mut(uid) else {
            return;
        };
        if t.active || !started(&t.pod) {
            return;
        }
        // A terminated container whose log was read to its end has nothing more to say.
        if t.ended.is_some() && !running(&t.pod) {
            return;
        }
        let mut o = self.options.clone();
        match t.ended {
            Some(ended) => {
                o.tail = None;
                o.since_seconds = None;
                o.since_time = Some(ended);
            }
            None if !self.initial.contains(uid) => o.tail = None,
            None => {}
        }
        t.active = true;
        let (client, tx, done, pod, uid) = (
            self.client.clone(),
            self.tx.clone(),
            self.done.clone(),
            t.pod.clone(),
            uid.to_string(),
        );
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Err(e) = stream::pump(&client, &pod, &o, &tx).await {
                let name = stream::shown_name(&pod, &o);
                eprintln!("warning: [{name}] reading the log failed: {e}");
            }
            let _ = done.send((uid, Timestamp::now()));
        });
    }
}

/// Streams the node pods of `selection` until interrupted (or the watch ends).
pub async fn follow(
    target: &Target,
    selection: &Selection,
    options: Options,
    tx: mpsc::Sender<Line>,
) -> Result<()> {
    let ns = selection.namespace.as_deref();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let config = watcher::Config::default().labels(&selection.pod_selector);
    let mut events = watcher(selection.pods(target), config).boxed();
    let mut f = Follower {
        client: target.client.clone(),
        options,
        tx,
        done: done_tx,
        tracked: HashMap::new(),
        initial: HashSet::new(),
        initializing: true,
    };
    let mut warned = false;
    loop {
        tokio::select! {
            Some((uid, at)) = done_rx.recv() => f.ended(uid, at),
            event = events.next() => match event {
                None => return Ok(()),
                Some(Ok(watcher::Event::Init)) => {}
                Some(Ok(watcher::Event::InitDone)) => f.initializing = false,
                Some(Ok(watcher::Event::Apply(p) | watcher::Event::InitApply(p))) => {
                    if selection.keeps(&p) {
                        f.seen(p);
                    }
                }
                Some(Ok(watcher::Event::Delete(p))) => {
                    if let Some(uid) = p.metadata.uid.as_ref() {
                        f.tracked.remove(uid);
                    }
                }
                Some(Err(e)) => {
                    if let Some(fatal) = fatal(&e, ns) {
                        return Err(fatal);
                    }
                    if !warned {
                        eprintln!("warning: watching the node pods failed ({e}); retrying");
                        warned = true;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            },
        }
    }
}

fn fatal(e: &watcher::Error, ns: Option<&str>) -> Option<Error> {
    let (err, verb) = match e {
        watcher::Error::InitialListFailed(e) => (e, "list"),
        watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => (e, "watch"),
        _ => return None,
    };
    (status_code(err) == Some(403)).then(|| Error::Forbidden {
        verb,
        resource: "pods".into(),
        namespace: ns.map(str::to_string),
    })
}
