//! One reading of a fleet's nodes: every node's `GET /state` at once, then `POST /reload` to
//! each node that serves another version than the pointer's and is not switching, so that a
//! node that refuses the version says why (celld answers 422 with its reason and keeps the
//! version it had), and the state again of each node that answered it adopted the version (so
//! the reading that sent the reload already shows the node serving it, and a publish costs the
//! fleet one status, not one for the switch and one for its end). A node is sent one reload
//! per version: a refusal is remembered until the
//! pointer names another version, a reload it took is sent again only after celld's own poll
//! period. A reconcile waits for a reading a short while only ([`NodeReads::within`]): nodes
//! that do not answer never hold a fleet's reconcile, or the others', for long.
//!
//! The capacity reader reads the same `GET /state`: a reading of its in which every node serves
//! the pointer's version is [offered](NodeReads::offer) here, and a fleet's periodic full
//! reconcile takes it instead of reading the nodes again, so an idle operator reads each node
//! at the capacity read rate, not at that rate and again for status.nodes.

use crate::locks::lock;
use crate::nodes::adoption::{Answer, Reading};
use crate::nodes::client::NodeApi;
use crate::nodes::reachability::Reader;
use crate::nodes::unanswered::Unanswered;
use celld_api::contract::node_api::Reload;
use celld_api::contract::node_api::node_address;
use futures::future::join_all;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Display;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a node that took a reload has to show the version before it is sent another: celld
/// reads the pointer every 30 s on its own.
pub const RELOAD_AGAIN_AFTER: Duration = Duration::from_secs(30);

/// The nodes of one fleet to read.
#[derive(Debug, Clone)]
pub struct FleetNodes {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its peer Service, through which each node has a stable name.
    pub peer_service: String,
    /// Nodes it runs (`name-0` … ).
    pub replicas: i32,
}

/// The reloads sent to one fleet's nodes, for one version.
#[derive(Debug)]
struct Sent {
    version: String,
    answers: BTreeMap<String, (Reload, Instant)>,
}

/// The reloads sent, the last reading (and when it was taken), the readings under way and the
/// fleets read slowly, by fleet uid.
#[derive(Debug, Default)]
pub struct NodeReads {
    sent: Mutex<HashMap<String, Sent>>,
    last: Mutex<HashMap<String, (Arc<Reading>, Instant)>>,
    under_way: Mutex<HashSet<String>>,
    /// Fleets whose last reading outlasted the reconcile's budget.
    slow: Mutex<HashSet<String>>,
}

impl NodeReads {
    /// Reads the nodes of `fleet` (uid `uid`) for `version`, waiting at most `budget`: a
    /// reading that takes longer (nodes that do not answer, a slow resolver) goes on without
    /// holding the reconcile, which gets the last reading of the same version and node count
    /// instead, and `late` is called when the late reading differs from that one (so the fleet
    /// is looked at again with it). No reading is waited for at all while the operator reaches
    /// no node ([`Reachability::cut_off`](crate::nodes::reachability::Reachability::cut_off)),
    /// where a fleet not read yet is taken as unreachable until its reading says otherwise,
    /// nor after a reading of the fleet outlasted `budget`, until one comes back within it.
    /// One reading of a fleet is under way at a time.
    pub async fn within(
        self: &Arc<Self>,
        api: &NodeApi,
        uid: &str,
        fleet: FleetNodes,
        version: &str,
        budget: Duration,
        late: impl FnOnce() + Send + 'static,
    ) -> Option<Arc<Reading>> {
        let replicas = fleet.replicas;
        let last = || self.last_of(uid, version, replicas);
        if !lock(&self.under_way).insert(uid.to_string()) {
            return last();
        }
        let cut_off = api.reachability().cut_off();
        if cut_off && last().is_none() {
            let unreachable = Reading {
                version: version.to_string(),
                nodes: pod_names(&fleet)
                    .into_iter()
                    .map(|pod| (pod, Answer::Unreadable(Unanswered::Unreachable)))
                    .collect(),
            };
            self.keep(uid, &Arc::new(unreachable));
        }
        let waits = !cut_off && !lock(&self.slow).contains(uid);
        let mut reading = tokio::spawn({
            let (reads, api, uid, version) = (
                Arc::clone(self),
                api.clone(),
                uid.to_string(),
                version.to_string(),
            );
            async move {
                let started = Instant::now();
                let reading = Arc::new(reads.read(&api, &uid, &fleet, &version).await);
                let changed = reads.keep(&uid, &reading);
                if started.elapsed() < budget {
                    lock(&reads.slow).remove(&uid);
                } else {
                    lock(&reads.slow).insert(uid.clone());
                }
                lock(&reads.under_way).remove(&uid);
                (reading, changed)
            }
        });
        let waited = if waits {
            tokio::time::timeout(budget, &mut reading).await.ok()
        } else {
            None
        };
        match waited {
            Some(Ok((reading, _))) => Some(reading),
            Some(Err(_)) => {
                lock(&self.under_way).remove(uid);
                last()
            }
            None => {
                let kept = last();
                let (reads, uid) = (Arc::clone(self), uid.to_string());
                tokio::spawn(async move {
                    match reading.await {
                        Ok((_, true)) => late(),
                        Ok((_, false)) => {}
                        // The reading ended without taking the fleet off the readings under way.
                        Err(_) => {
                            lock(&reads.under_way).remove(&uid);
                        }
                    }
                });
                kept
            }
        }
    }

    /// Keeps `reading`, made by another reader of the nodes' states (the capacity reader),
    /// as fleet `uid`'s last when every node serves its version: such a reading asks for no
    /// reload, and a periodic reconcile can take it for its own.
    pub fn offer(&self, uid: &str, reading: Reading) {
        if serves(&reading) {
            lock(&self.last).insert(uid.to_string(), (Arc::new(reading), Instant::now()));
        }
    }

    /// The last reading of fleet `uid`, if it was of `version` and `replicas` nodes.
    fn last_of(&self, uid: &str, version: &str, replicas: i32) -> Option<Arc<Reading>> {
        self.last_taken(uid, version, replicas).map(|(r, _)| r)
    }

    /// The last reading of fleet `uid`, if it was of `version` and `replicas` nodes, taken
    /// less than `age` ago, and every node served the version: one to take instead of reading
    /// the nodes again when nothing about the fleet moved.
    pub fn steady(
        &self,
        uid: &str,
        version: &str,
        replicas: i32,
        age: Duration,
    ) -> Option<Arc<Reading>> {
        self.last_taken(uid, version, replicas)
            .filter(|(r, at)| at.elapsed() < age && serves(r))
            .map(|(r, _)| r)
    }

    /// The last reading of fleet `uid` and when it was taken, if it was of `version` and
    /// `replicas` nodes.
    fn last_taken(
        &self,
        uid: &str,
        version: &str,
        replicas: i32,
    ) -> Option<(Arc<Reading>, Instant)> {
        lock(&self.last)
            .get(uid)
            .filter(|(r, _)| r.version == version && r.nodes.len() == replicas.max(0) as usize)
            .map(|(r, at)| (Arc::clone(r), *at))
    }

    /// Keeps `reading` as fleet `uid`'s last; whether it differs from the one before.
    fn keep(&self, uid: &str, reading: &Arc<Reading>) -> bool {
        lock(&self.last)
            .insert(uid.to_string(), (Arc::clone(reading), Instant::now()))
            .map(|(before, _)| before)
            .as_ref()
            != Some(reading)
    }

    /// Reads the nodes of `fleet` (uid `uid`) for `version` through `api`.
    async fn read(&self, api: &NodeApi, uid: &str, fleet: &FleetNodes, version: &str) -> Reading {
        let (pods, mut answers): (Vec<String>, Vec<Answer>) = states(api, fleet, Reader::Reconcile)
            .await
            .into_iter()
            .unzip();
        let address = |pod: &str| node_address(pod, &fleet.peer_service, &fleet.namespace);
        let behind: Vec<usize> = answers
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                matches!(a, Answer::State(s, _) if s.version() != Some(version) && !s.swapping())
            })
            .map(|(i, _)| i)
            .collect();
        let now = Instant::now();
        let remembered = self.remembered(uid, version, now);
        let mut to_send = Vec::new();
        for i in behind {
            match remembered.get(&pods[i]) {
                Some(reload) => attach(&mut answers[i], reload.clone()),
                None => to_send.push(i),
            }
        }
        let replies = join_all(to_send.iter().map(|&i| {
            let address = address(&pods[i]);
            async move { api.reload(&address).await }
        }))
        .await;
        let mut took = Vec::new();
        let mut adopted = Vec::new();
        for (i, reply) in to_send.into_iter().zip(replies) {
            // A reload that could not be sent says nothing of the version: the node is read
            // again, and sent one, on the next reading.
            if let Ok(reload) = reply {
                if reload == Reload::Adopted {
                    adopted.push(i);
                }
                took.push((pods[i].clone(), reload.clone()));
                attach(&mut answers[i], reload);
            }
        }
        let again = join_all(
            adopted
                .iter()
                .map(|&i| state_of(api, Reader::Reconcile, address(&pods[i]))),
        )
        .await;
        for (i, answer) in adopted.into_iter().zip(again) {
            // A node that took the reload but cannot be read now keeps its first answer.
            if let Answer::State(state, _) = answer {
                answers[i] = Answer::State(state, Some(Reload::Adopted));
            }
        }
        self.remember(uid, version, took, now);
        Reading {
            version: version.to_string(),
            nodes: pods.into_iter().zip(answers).collect(),
        }
    }

    /// The answers to reloads of fleet `uid`'s nodes for `version` that still stand at `now`:
    /// every refusal, and reloads taken within [`RELOAD_AGAIN_AFTER`].
    fn remembered(&self, uid: &str, version: &str, now: Instant) -> BTreeMap<String, Reload> {
        let sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        sent.get(uid)
            .filter(|s| s.version == version)
            .map(|s| {
                s.answers
                    .iter()
                    .filter(|(_, (reload, at))| {
                        !matches!(reload, Reload::Adopted | Reload::Unchanged)
                            || now.saturating_duration_since(*at) < RELOAD_AGAIN_AFTER
                    })
                    .map(|(pod, (reload, _))| (pod.clone(), reload.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn remember(&self, uid: &str, version: &str, took: Vec<(String, Reload)>, now: Instant) {
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        let entry = sent.entry(uid.to_string()).or_insert_with(|| Sent {
            version: version.to_string(),
            answers: BTreeMap::new(),
        });
        if entry.version != version {
            entry.version = version.to_string();
            entry.answers.clear();
        }
        for (pod, reload) in took {
            entry.answers.insert(pod, (reload, now));
        }
    }

    /// Forgets the fleets whose uid `live` does not keep.
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        crate::map_retain::retain(&mut lock(&self.sent), |uid, _| live(uid));
        crate::map_retain::retain(&mut lock(&self.last), |uid, _| live(uid));
        lock(&self.slow).retain(|uid| live(uid));
    }
}

/// The state of every node of `fleet`, in ordinal order, read at once through `api` for
/// `reader`. Nodes are asked before they are ready too: celld answers on its internal listener
/// while its readiness gate holds, so what a node serves is known by the time it turns ready,
/// and a node that does not answer yet counts as not ready as long as the fleet has as many
/// nodes not ready.
pub async fn states(api: &NodeApi, fleet: &FleetNodes, reader: Reader) -> Vec<(String, Answer)> {
    let pods = pod_names(fleet);
    let answers = join_all(pods.iter().map(|pod| {
        state_of(
            api,
            reader,
            node_address(pod, &fleet.peer_service, &fleet.namespace),
        )
    }))
    .await;
    pods.into_iter().zip(answers).collect()
}

/// The state of the node at `address`, read through `api` for `reader`.
async fn state_of(api: &NodeApi, reader: Reader, address: String) -> Answer {
    let state = api.state(&address).await;
    let failed = state
        .as_ref()
        .err()
        .map(|e| (e.unanswered(), e as &dyn Display));
    api.reachability().record(reader, &address, failed);
    match state {
        Ok(state) => Answer::State(state, None),
        Err(e) => Answer::Unreadable(e.unanswered()),
    }
}

/// The pods of `fleet`'s nodes, in ordinal order.
fn pod_names(fleet: &FleetNodes) -> Vec<String> {
    (0..fleet.replicas.max(0))
        .map(|ordinal| format!("{}-{ordinal}", fleet.name))
        .collect()
}

/// Whether every node of `reading` answered, serving its version and not switching.
fn serves(reading: &Reading) -> bool {
    reading.nodes.iter().all(|(_, answer)| {
        matches!(answer, Answer::State(s, _) if s.version() == Some(reading.version.as_str()) && !s.swapping())
    })
}

/// Adds a reload's answer to a node's state.
fn attach(answer: &mut Answer, reload: Reload) {
    if let Answer::State(_, slot) = answer {
        *slot = Some(reload);
    }
}

#[cfg(test)]
mod tests;
