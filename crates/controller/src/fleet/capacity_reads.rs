//! The capacity reader: every fleet's nodes are read (`GET /state`) at a bounded rate, those of
//! fleets with spec.autoscaling first and more often, and each reading is kept in the
//! [store](crate::capacity::store) the gauges are exported from. A fleet is sent to be
//! reconciled only when its reading moved (a signal turned on or off, a count moved by more than
//! a tenth) and its status would show it, so a quiet fleet costs reads of its nodes and nothing
//! on the API server.

use crate::cache::caches;
use crate::capacity::reading::{FleetReading, node_capacity, shown_in_status, unreadable};
use crate::capacity::signals::{MemoryBudget, signals};
use crate::capacity::store::FleetRef;
use crate::children::peer_service_name;
use crate::fleet::context::Context;
use crate::nodes::adoption::{Answer, Reading};
use crate::nodes::reachability::Reader;
use crate::nodes::reads::{FleetNodes, states};
use celld_api::CelldFleet;
use futures::future::join_all;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::ObjectRef;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the reader looks for fleets due.
const TICK: Duration = Duration::from_secs(1);

/// StatefulSets looked up per tick, per read allowed per second.
const LOOKUPS_PER_READ: usize = 4;

/// The longest the fleets found due by one look at every fleet are read from before the next
/// look (shorter when --autoscale-read-seconds or --capacity-read-seconds is): at 10,000
/// fleets a look every second was a third of the idle operator's CPU.
const RESCAN_EVERY: Duration = Duration::from_secs(5);

/// One fleet due for a reading.
struct Due {
    uid: String,
    namespace: String,
    name: String,
    replicas: i32,
    /// spec.autoscaling's memory budget, for a fleet with it (what the reading says to it is
    /// worked out as it is kept).
    autoscaled: Option<Option<MemoryBudget>>,
}

/// Reads the fleets' nodes until `shutdown` resolves.
pub async fn run(ctx: Arc<Context>, shutdown: impl Future<Output = ()>) {
    let rate = f64::from(ctx.shared.settings.capacity_reads_per_second.max(1));
    let mut tokens = rate;
    let mut last = Instant::now();
    let settings = &ctx.shared.settings;
    let every = RESCAN_EVERY
        .min(settings.autoscale_interval)
        .min(settings.capacity_interval);
    let mut queue = Queue::new(every);
    let mut ticks = tokio::time::interval(TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            _ = ticks.tick() => {}
        }
        let now = Instant::now();
        tokens = (tokens + rate * now.duration_since(last).as_secs_f64()).min(rate);
        last = now;
        if tokens <= 0.0 {
            continue;
        }
        // Fleets that run no node yet are looked up too: a bound keeps a start of a thousand
        // fleets from parsing every StatefulSet every second.
        queue.refill(now, || due(&ctx, now, LOOKUPS_PER_READ * rate as usize));
        let mut batch = Vec::new();
        while tokens > 0.0 {
            let Some(candidate) = queue.next() else {
                break;
            };
            // Only the fleets read now are looked up in the StatefulSet cache.
            if let Some(due) = runs_nodes(&ctx, candidate) {
                tokens -= f64::from(due.replicas);
                batch.push(due);
            }
        }
        join_all(batch.into_iter().map(|due| read(&ctx, due))).await;
    }
}

/// The fleets found due by the last look at every fleet, in the order they are read: a look
/// walks every fleet, so while fleets it found wait for their turn (more nodes than the read
/// rate allows in the capacity period: 1,000 fleets and more by default) the next look comes
/// only [`RESCAN_EVERY`] after it, or once they are all read.
struct Queue {
    fleets: std::collections::VecDeque<Candidate>,
    looked: Option<Instant>,
    every: Duration,
}

impl Queue {
    fn new(every: Duration) -> Self {
        Self {
            fleets: std::collections::VecDeque::new(),
            looked: None,
            every,
        }
    }

    /// Looks at every fleet again through `look` when the fleets found are all read or the
    /// last look is [`RESCAN_EVERY`] old.
    fn refill(&mut self, now: Instant, look: impl FnOnce() -> Vec<Candidate>) {
        let stale = self
            .looked
            .is_none_or(|at| now.saturating_duration_since(at) >= self.every);
        if stale || self.fleets.is_empty() {
            self.fleets = look().into();
            self.looked = Some(now);
        }
    }

    fn next(&mut self) -> Option<Candidate> {
        self.fleets.pop_front()
    }
}

/// A fleet due for a reading, before its StatefulSet is looked at.
struct Candidate {
    uid: String,
    namespace: String,
    name: String,
    autoscaled: Option<Option<MemoryBudget>>,
    last: Option<Instant>,
}

/// The first `limit` fleets due for a reading at `now`: those with spec.autoscaling first,
/// then the longest unread. Every fleet is looked at each tick, so this copies nothing of a
/// fleet that is not among them.
fn due(ctx: &Context, now: Instant, limit: usize) -> Vec<Candidate> {
    let settings = &ctx.shared.settings;
    let fleets = ctx.shared.caches.fleets.state();
    let mut order: Vec<Order> = fleets
        .iter()
        .enumerate()
        .filter_map(|(index, guard)| {
            let fleet: &CelldFleet = guard.0.as_ref().ok()?;
            let last = ctx.nodes.capacity.taken(fleet.metadata.uid.as_deref()?);
            let autoscaled = fleet.spec.autoscaling.is_some();
            let every = if autoscaled {
                settings.autoscale_interval
            } else {
                settings.capacity_interval
            };
            if last.is_some_and(|at| now.duration_since(at) < every) {
                return None;
            }
            if !autoscaled && last.is_none() && !shows_every_node_ready(fleet) {
                return None;
            }
            Some((!autoscaled, last, index))
        })
        .collect();
    first(&mut order, limit);
    order
        .into_iter()
        .filter_map(|(manual, last, index)| {
            let fleet: &CelldFleet = fleets.get(index)?.0.as_ref().ok()?;
            Some(Candidate {
                uid: fleet.metadata.uid.clone()?,
                namespace: fleet.metadata.namespace.clone()?,
                name: fleet.metadata.name.clone()?,
                autoscaled: (!manual).then(|| MemoryBudget::of(&fleet.spec)),
                last,
            })
        })
        .collect()
}

/// Whether `fleet`'s status shows nodes and every one of them ready. A fleet without
/// spec.autoscaling is first read only then (its StatefulSet is checked again before it is
/// read): starting fleets are not looked up in the StatefulSet cache, so they do not take the
/// places of the ready fleets behind them look after look while thousands start.
fn shows_every_node_ready(fleet: &CelldFleet) -> bool {
    fleet
        .status
        .as_ref()
        .is_some_and(|s| s.ready_replicas > 0 && s.ready_replicas == s.replicas)
}

/// Where a fleet due comes: without spec.autoscaling after those with it, then by its last
/// reading (never read first), then by its place in the cache.
type Order = (bool, Option<Instant>, usize);

/// Keeps the `limit` first of `order`, sorted, without sorting the rest.
fn first(order: &mut Vec<Order>, limit: usize) {
    if limit == 0 {
        order.clear();
        return;
    }
    if order.len() > limit {
        order.select_nth_unstable(limit - 1);
        order.truncate(limit);
    }
    order.sort_unstable();
}

/// The fleet to read, when it runs nodes (its StatefulSet asks for some); one without
/// spec.autoscaling is first read once they are ready (its capacity is not worth a status
/// write while it starts).
fn runs_nodes(ctx: &Context, c: Candidate) -> Option<Due> {
    let sts = caches::child(
        &ctx.shared.caches.children.statefulsets,
        &c.namespace,
        &c.name,
    )?;
    let replicas = sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0);
    let ready = sts.status.as_ref().and_then(|s| s.ready_replicas) == Some(replicas);
    (replicas > 0 && (c.autoscaled.is_some() || ready || c.last.is_some())).then_some(Due {
        uid: c.uid,
        namespace: c.namespace,
        name: c.name,
        replicas,
        autoscaled: c.autoscaled,
    })
}

/// Reads `due`'s nodes, keeps the reading, and sends the fleet to be reconciled when it moved.
async fn read(ctx: &Context, due: Due) {
    let nodes = FleetNodes {
        namespace: due.namespace.clone(),
        name: due.name.clone(),
        peer_service: peer_service_name(&due.name),
        replicas: due.replicas,
    };
    let answers = states(&ctx.nodes.api, &nodes, Reader::Capacity).await;
    let taken = Instant::now();
    // The same states stand in for the fleet's next periodic reconcile's reading.
    if let Some(version) = ctx.reads.pointers.deployed_version(&due.uid) {
        let reading = Reading {
            version,
            nodes: answers.clone(),
        };
        ctx.nodes.reads.offer(&due.uid, reading);
    }
    let nodes: Vec<_> = answers
        .into_iter()
        .map(|(pod, answer)| match answer {
            Answer::State(state, _) => node_capacity(&pod, &state),
            Answer::Unreadable(why) => unreadable(&pod, why.to_string()),
        })
        .collect();
    let reading = FleetReading {
        read_at: Timestamp::now(),
        nodes,
    };
    let said = due
        .autoscaled
        .map(|budget| signals(&reading, due.replicas, budget));
    let fleet = FleetRef {
        uid: &due.uid,
        namespace: &due.namespace,
        name: &due.name,
    };
    let fleet_ref = ObjectRef::new(&due.name).within(&due.namespace);
    // A reading the fleet's status would not show is kept for the gauges only.
    let cut_off = ctx.nodes.api.reachability().cut_off();
    let shown = ctx
        .shared
        .caches
        .fleets
        .get(&fleet_ref)
        .is_some_and(|guard| {
            guard
                .0
                .as_ref()
                .is_ok_and(|f| shown_in_status(f, &reading, reading.read_at, cut_off))
        });
    if ctx.nodes.capacity.record(fleet, reading, taken, said) && shown {
        // The controller is gone only when the operator stops.
        let _ = ctx.nodes.trigger.unbounded_send(fleet_ref);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::CelldFleetStatus;

    #[test]
    fn the_first_due_are_kept_in_order_and_the_rest_dropped() {
        let t0 = Instant::now();
        let at = |s: u64| Some(t0 + Duration::from_secs(s));
        let all: Vec<Order> = vec![
            (true, at(5), 0),
            (true, None, 1),
            (false, at(9), 2),
            (true, at(1), 3),
            (false, at(2), 4),
            (true, at(3), 5),
        ];
        let mut order = all.clone();
        first(&mut order, 4);
        assert_eq!(
            order,
            [
                (false, at(2), 4),
                (false, at(9), 2),
                (true, None, 1),
                (true, at(1), 3)
            ]
        );
        let mut order = all.clone();
        first(&mut order, 10);
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        let mut order = all;
        first(&mut order, 0);
        assert!(order.is_empty());
    }

    #[test]
    fn a_fleet_is_first_read_once_its_status_shows_every_node_ready() {
        let fleet = |status: Option<(i32, i32)>| {
            let mut fleet = crate::children::fixtures::fleet(crate::children::fixtures::MINIMAL);
            fleet.status = status.map(|(replicas, ready_replicas)| CelldFleetStatus {
                replicas,
                ready_replicas,
                ..Default::default()
            });
            fleet
        };
        assert!(!shows_every_node_ready(&fleet(None)));
        assert!(!shows_every_node_ready(&fleet(Some((0, 0)))));
        assert!(!shows_every_node_ready(&fleet(Some((3, 2)))));
        assert!(shows_every_node_ready(&fleet(Some((3, 3)))));
    }

    fn candidates(names: &[&str]) -> Vec<Candidate> {
        names
            .iter()
            .map(|n| Candidate {
                uid: (*n).into(),
                namespace: "ns".into(),
                name: (*n).into(),
                autoscaled: None,
                last: None,
            })
            .collect()
    }

    fn names(queue: &mut Queue) -> Vec<String> {
        std::iter::from_fn(|| queue.next())
            .map(|c| c.name)
            .collect()
    }

    #[test]
    fn the_fleets_are_looked_at_again_once_those_found_are_read_or_the_look_is_old() {
        let start = Instant::now();
        let mut queue = Queue::new(Duration::from_secs(5));
        let mut looks = 0;
        let mut refill = |queue: &mut Queue, at: u64, found: &[&str]| {
            queue.refill(start + Duration::from_secs(at), || {
                looks += 1;
                candidates(found)
            });
        };
        refill(&mut queue, 0, &["a", "b", "c"]);
        assert_eq!(queue.next().map(|c| c.name).as_deref(), Some("a"));
        // Some wait: no new look within the period.
        refill(&mut queue, 1, &["x"]);
        assert_eq!(queue.next().map(|c| c.name).as_deref(), Some("b"));
        // The period passed: a new look, whatever waits.
        refill(&mut queue, 5, &["c", "d"]);
        assert_eq!(names(&mut queue), ["c", "d"]);
        // All read: a new look at once.
        refill(&mut queue, 6, &["e"]);
        assert_eq!(names(&mut queue), ["e"]);
        assert_eq!(looks, 3);
    }
}
