//! Watches StatefulSets and fleets in every namespace and records when each was first
//! seen ready (a StatefulSet with all its replicas ready; a fleet with `Ready=True`), when a
//! fleet's status first showed its capacity, and which exist at all.

use crate::error::{Error, Result};
use crate::settings::REPLICAS;
use celld_api::CelldFleet;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// What one watch has seen of one kind.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// When each object was first seen ready, by name.
    pub ready: HashMap<String, Instant>,
    /// When each object was first seen showing what the watch looks for besides readiness
    /// (a fleet's capacity in its status), by name.
    pub shown: HashMap<String, Instant>,
    /// The objects that exist now.
    pub present: HashSet<String>,
}

impl Seen {
    /// The latest first-ready time (when the last one became ready).
    pub fn last_ready(&self) -> Option<Instant> {
        self.ready.values().max().copied()
    }
}

/// What a watch has seen, shared with its task.
pub type Shared = Arc<Mutex<Seen>>;

/// The seen state, even if a task panicked holding it.
pub fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Watches of StatefulSets and fleets; stopped when dropped.
#[derive(Debug)]
pub struct Watches {
    statefulsets: Shared,
    fleets: Shared,
    tasks: Vec<JoinHandle<()>>,
}

/// Whether a StatefulSet has all its (nonzero) replicas ready.
pub fn statefulset_ready(s: &StatefulSet) -> bool {
    let wanted = s.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let ready = s
        .status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0);
    wanted == REPLICAS && ready >= wanted
}

/// Whether a fleet's status shows its nodes' capacity (`status.capacity`): the operator writes
/// it once a reading is worth showing, at the latest 5 minutes after the fleet's creation.
pub fn fleet_shows_capacity(f: &CelldFleet) -> bool {
    f.status.as_ref().is_some_and(|s| s.capacity.is_some())
}

/// Whether a fleet reports `Ready=True`.
pub fn fleet_ready(f: &CelldFleet) -> bool {
    f.status
        .as_ref()
        .and_then(|s| celld_api::conditions::find(&s.conditions, "Ready"))
        .is_some_and(|c| c.status == "True")
}

/// Watches `api` and records what exists and when each object was first seen `ready`, and
/// first seen `shown`, until the task is aborted.
pub fn watch<K>(
    api: Api<K>,
    ready: fn(&K) -> bool,
    shown: fn(&K) -> bool,
) -> (Shared, JoinHandle<()>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let shared: Shared = Arc::default();
    let seen = shared.clone();
    let task = tokio::spawn(async move {
        let mut events = watcher::watcher(api, watcher::Config::default())
            .default_backoff()
            .boxed();
        while let Some(event) = events.next().await {
            let now = Instant::now();
            let mut seen = lock(&seen);
            match event {
                Ok(Event::Apply(o) | Event::InitApply(o)) => {
                    let name = o.name_any();
                    if ready(&o) {
                        seen.ready.entry(name.clone()).or_insert(now);
                    }
                    if shown(&o) {
                        seen.shown.entry(name.clone()).or_insert(now);
                    }
                    seen.present.insert(name);
                }
                Ok(Event::Delete(o)) => {
                    seen.present.remove(&o.name_any());
                }
                Ok(Event::Init) => seen.present.clear(),
                Ok(Event::InitDone) | Err(_) => {}
            }
        }
    });
    (shared, task)
}

impl Watches {
    /// Waits until the watch has seen `count` fleets show their capacity, or until `deadline`;
    /// `alive` is asked every second and ends the wait with its error.
    pub async fn wait_shown(
        &self,
        count: usize,
        deadline: Instant,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<usize> {
        loop {
            let shown = lock(&self.fleets).shown.len();
            if shown >= count || Instant::now() >= deadline {
                return Ok(shown);
            }
            alive()?;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Starts watching every namespace (the bench's fleets have names unique across them).
    pub fn start(client: &Client) -> Self {
        let (statefulsets, a) =
            watch::<StatefulSet>(Api::all(client.clone()), statefulset_ready, |_| false);
        let (fleets, b) =
            watch::<CelldFleet>(Api::all(client.clone()), fleet_ready, fleet_shows_capacity);
        Watches {
            statefulsets,
            fleets,
            tasks: vec![a, b],
        }
    }

    /// What was seen of the StatefulSets.
    pub fn statefulsets(&self) -> Seen {
        lock(&self.statefulsets).clone()
    }

    /// What was seen of the fleets.
    pub fn fleets(&self) -> Seen {
        lock(&self.fleets).clone()
    }

    /// Forgets the ready times (for the next churn cycle).
    pub fn forget_ready(&self) {
        lock(&self.statefulsets).ready.clear();
        lock(&self.fleets).ready.clear();
    }

    /// Waits until `statefulsets` StatefulSets and `fleets` fleets have been seen ready, failing
    /// after `timeout`; `alive` is checked on each round (the operator still running).
    pub async fn wait_ready(
        &self,
        statefulsets: usize,
        fleets: usize,
        timeout: Duration,
        logs: PathBuf,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        self.wait(timeout, logs, &mut alive, |s, f| {
            (s.ready.len() >= statefulsets && f.ready.len() >= fleets)
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "{}/{statefulsets} StatefulSets ready, {}/{fleets} fleets Ready",
                        s.ready.len(),
                        f.ready.len()
                    )
                })
        })
        .await
    }

    /// Waits until no StatefulSet and no fleet exists.
    pub async fn wait_gone(
        &self,
        timeout: Duration,
        logs: PathBuf,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        self.wait(timeout, logs, &mut alive, |s, f| {
            (s.present.is_empty() && f.present.is_empty())
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "{} StatefulSets and {} fleets left",
                        s.present.len(),
                        f.present.len()
                    )
                })
        })
        .await
    }

    async fn wait(
        &self,
        timeout: Duration,
        logs: PathBuf,
        alive: &mut impl FnMut() -> Result<()>,
        done: impl Fn(&Seen, &Seen) -> Result<(), String>,
    ) -> Result<()> {
        wait_until("the bench's fleets", timeout, logs, alive, || {
            done(&self.statefulsets(), &self.fleets())
        })
        .await
    }
}

/// Asks `done` every 100 ms until it says done (`Ok`), failing after `timeout` with what it
/// last said it saw; `alive` is checked on each round (the operator still running). `what` and
/// `logs` name what was awaited and where to look when it times out.
pub async fn wait_until(
    what: &str,
    timeout: Duration,
    logs: PathBuf,
    alive: &mut impl FnMut() -> Result<()>,
    done: impl Fn() -> Result<(), String>,
) -> Result<()> {
    let started = Instant::now();
    loop {
        match done() {
            Ok(()) => return Ok(()),
            Err(seen) if started.elapsed() >= timeout => {
                return Err(Error::Timeout {
                    what: what.into(),
                    seconds: timeout.as_secs(),
                    seen,
                    logs,
                });
            }
            Err(_) => alive()?,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The largest delay, over the names in both, from the first map's time to the second's
/// (zero when the second came first).
pub fn max_lag(first: &HashMap<String, Instant>, then: &HashMap<String, Instant>) -> Duration {
    lags(first, then)
        .map(|(_, _, lag)| lag)
        .max()
        .unwrap_or_default()
}

/// For each name in both, the second map's time and the delay from the first map's time to it
/// (zero when the second came first).
pub fn lags<'a>(
    first: &'a HashMap<String, Instant>,
    then: impl IntoIterator<Item = (&'a String, &'a Instant)>,
) -> impl Iterator<Item = (&'a String, Instant, Duration)> {
    then.into_iter().filter_map(|(name, t)| {
        first
            .get(name)
            .map(|f| (name, *t, t.saturating_duration_since(*f)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_statefulset_is_ready_when_both_replicas_are() {
        let sts = |replicas: i32, ready: i32| -> StatefulSet {
            serde_json::from_value(json!({"spec": {"replicas": replicas, "selector": {}, "template": {}, "serviceName": "x"}, "status": {"replicas": replicas, "readyReplicas": ready}})).unwrap()
        };
        assert!(statefulset_ready(&sts(2, 2)));
        assert!(!statefulset_ready(&sts(2, 1)));
        assert!(
            !statefulset_ready(&sts(0, 0)),
            "a fleet parked at 0 nodes is not ready"
        );
    }

    #[test]
    fn the_lag_is_the_largest_per_name_delay() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let sts = HashMap::from([
            ("a".to_string(), at(100)),
            ("b".to_string(), at(200)),
            ("c".to_string(), at(900)),
        ]);
        let fleets = HashMap::from([
            ("a".to_string(), at(400)),
            ("b".to_string(), at(1_200)),
            ("c".to_string(), at(800)),
        ]);
        assert_eq!(max_lag(&sts, &fleets), Duration::from_millis(1_000));
        assert_eq!(max_lag(&sts, &HashMap::new()), Duration::ZERO);
    }
}
