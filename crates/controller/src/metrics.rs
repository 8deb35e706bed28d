//! Prometheus metrics: reconciles, their duration, what they failed on, API writes, fleets by
//! Ready condition and leadership.

use crate::locks::lock;
use celld_api::reasons::Reason;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

type Labels = Vec<(String, String)>;

/// The prefix of every metric's name.
const PREFIX: &str = "celld_operator";

/// The operator's metrics, registered under the `celld_operator` prefix.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    duration: Histogram,
    writes: Family<Labels, Counter>,
    fleets: Family<Labels, Gauge>,
    leader: Gauge,
    watch_events: Family<Labels, Gauge<f64, AtomicU64>>,
    watch_stalls: Family<Labels, Counter>,
    total_writes: AtomicU64,
    reads: Counter,
    s3_clients: Gauge,
    unchanged: Counter,
    followed: Counter,
    source_publishes: Counter,
    source_drift: Counter,
    scale_decisions: Family<Labels, Counter>,
    node_state_reads: Family<Labels, Counter>,
    nodes_unreachable: Gauge,
    node_fences: Counter,
    /// What the controllers export of their own state (the fleets' capacity gauges), set
    /// anew by each leadership term.
    exported: Mutex<Registry>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix(PREFIX);
        let reconciles = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let duration = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        let writes = Family::<Labels, Counter>::default();
        let fleets = Family::<Labels, Gauge>::default();
        let leader = Gauge::default();
        let watch_events = Family::<Labels, Gauge<f64, AtomicU64>>::default();
        let watch_stalls = Family::<Labels, Counter>::default();
        let reads = Counter::default();
        let s3_clients = Gauge::default();
        let unchanged = Counter::default();
        let followed = Counter::default();
        let source_publishes = Counter::default();
        let source_drift = Counter::default();
        registry.register(
            "source_publishes",
            "Deploy Jobs started to publish a fleet's spec.source (a new revision, a retry, or a correction of drift)",
            source_publishes.clone(),
        );
        registry.register(
            "source_drift",
            "Times a fleet's bucket was found serving a version its spec.source did not publish (someone else deployed)",
            source_drift.clone(),
        );
        registry.register(
            "reconciles",
            "Fleet reconciles by result",
            reconciles.clone(),
        );
        registry.register(
            "reconcile_errors",
            "Failures reconciles met, by reason: a child the API server refused or that could not be reached, storage that does not resolve, an unreadable bucket, a status that could not be written",
            errors.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Time a fleet reconcile takes",
            duration.clone(),
        );
        registry.register(
            "api_writes",
            "Writes the operator sent to the API server, by kind and verb (apply, status, create, update, patch, delete), counted as each is sent by the client every write passes",
            writes.clone(),
        );
        registry.register("fleets", "Fleets by Ready condition status", fleets.clone());
        registry.register(
            "leader",
            "1 while this replica holds the leader Lease",
            leader.clone(),
        );
        registry.register(
            "watch_last_event_timestamp_seconds",
            "Unix time a watch last showed life: a list or watch response, an event or a bookmark",
            watch_events.clone(),
        );
        registry.register(
            "watch_stalls",
            "Watches dropped and resumed because they delivered nothing within the watch timeout",
            watch_stalls.clone(),
        );
        registry.register(
            "api_reads",
            "Reads the reconciles sent to the API server, watches excluded: a Secret whose contents changed, an object missing from the caches. At rest this does not grow",
            reads.clone(),
        );
        registry.register(
            "s3_clients",
            "S3 clients held, one per endpoint, region and credentials (each with its connection pool)",
            s3_clients.clone(),
        );
        registry.register(
            "reconciles_unchanged",
            "Reconciles that found the fleet's inputs (fleet, store, Secret, children, deployment pointer) as the last one left them, and so planned and wrote nothing",
            unchanged.clone(),
        );
        let scale_decisions = Family::<Labels, Counter>::default();
        registry.register(
            "autoscaler_decisions",
            "Changes of a fleet's node count made by spec.autoscaling, by direction (up, down) and the signal behind it (CapacityWaiting, Pressured, Headroom, BelowMinimum, AboveMaximum)",
            scale_decisions.clone(),
        );
        let node_state_reads = Family::<Labels, Counter>::default();
        registry.register(
            "node_state_reads",
            "GET /state requests to the fleets' nodes, by reader (capacity: the capacity reader; reconcile: a fleet's reconcile, for status.nodes and upgrades) and result: ok, unreachable (no connection), silent (no answer in time), bad_answer (an error status, or not celld's state)",
            node_state_reads.clone(),
        );
        let nodes_unreachable = Gauge::default();
        registry.register(
            "nodes_unreachable",
            "1 while the operator reaches no node's API: the last connections to nodes all failed (the operator's network cannot reach the pods' port 8081)",
            nodes_unreachable.clone(),
        );
        let node_fences = Counter::default();
        registry.register(
            "node_fences",
            "Node restarts whose last exit was celld's self-fence (exit code 3: a lost lease compare-and-swap, for example an object store answering lease renewals with 409), counted once each as the operator sees them; recent ones are on the fleet's NodesFencing condition",
            node_fences.clone(),
        );
        registry.register(
            "status_followed",
            "Fleet statuses written as soon as a StatefulSet's status changed their Ready condition, ahead of the fleet's next reconcile",
            followed.clone(),
        );
        Self {
            registry,
            reconciles,
            errors,
            duration,
            writes,
            fleets,
            leader,
            watch_events,
            watch_stalls,
            total_writes: AtomicU64::new(0),
            reads,
            s3_clients,
            unchanged,
            followed,
            source_publishes,
            source_drift,
            scale_decisions,
            node_state_reads,
            nodes_unreachable,
            node_fences,
            exported: Mutex::new(Registry::with_prefix(PREFIX)),
        }
    }
}

impl Metrics {
    /// Counts a deploy Job started for a fleet's spec.source.
    pub fn source_publish_started(&self) {
        self.source_publishes.inc();
    }

    /// Counts a drift found between a fleet's spec.source and its bucket.
    pub fn source_drifted(&self) {
        self.source_drift.inc();
    }

    /// Counts a change of a fleet's node count by spec.autoscaling.
    pub fn scale_decided(&self, direction: &str, reason: &str) {
        self.scale_decisions
            .get_or_create(&vec![
                ("direction".to_string(), direction.to_string()),
                ("reason".to_string(), reason.to_string()),
            ])
            .inc();
    }

    /// Counts a read of a node's state by `reader`, by `result`.
    pub fn node_state_read(&self, reader: &str, result: &str) {
        self.node_state_reads
            .get_or_create(&vec![
                ("reader".to_string(), reader.to_string()),
                ("result".to_string(), result.to_string()),
            ])
            .inc();
    }

    /// Says whether the operator reaches no node's API.
    pub fn set_nodes_unreachable(&self, unreachable: bool) {
        self.nodes_unreachable.set(i64::from(unreachable));
    }

    /// Counts a node's self-fence.
    pub fn node_fenced(&self) {
        self.node_fences.inc();
    }

    /// The node self-fences counted.
    pub fn node_fences(&self) -> u64 {
        self.node_fences.get()
    }

    /// Exports `collector`'s metrics from now on, in place of what was exported before (a
    /// controller's state of an earlier leadership term).
    pub fn export(&self, collector: Box<dyn Collector>) {
        let mut registry = Registry::with_prefix(PREFIX);
        registry.register_collector(collector);
        *lock(&self.exported) = registry;
    }

    /// Counts a finished reconcile and its duration.
    pub fn reconciled(&self, ok: bool, seconds: f64) {
        let result = if ok { "ok" } else { "error" };
        self.reconciles
            .get_or_create(&vec![("result".into(), result.into())])
            .inc();
        self.duration.observe(seconds);
    }

    /// Counts a failure a reconcile met.
    pub fn failed(&self, reason: Reason) {
        self.errors
            .get_or_create(&vec![("reason".into(), reason.as_str().into())])
            .inc();
    }

    /// Failures counted under `reason` so far.
    pub fn failures(&self, reason: Reason) -> u64 {
        self.errors
            .get(&vec![("reason".into(), reason.as_str().into())])
            .map_or(0, |c| c.get())
    }

    /// Counts a write of `kind` with `verb` (apply, status, create, update, patch, delete).
    pub fn write(&self, kind: &str, verb: &str) {
        self.writes
            .get_or_create(&vec![
                ("kind".into(), kind.into()),
                ("verb".into(), verb.into()),
            ])
            .inc();
        self.total_writes.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets how many fleets have each Ready status.
    pub fn set_fleets(&self, ready: i64, not_ready: i64, unknown: i64) {
        for (status, n) in [("True", ready), ("False", not_ready), ("Unknown", unknown)] {
            self.fleets
                .get_or_create(&vec![
                    ("condition".into(), "Ready".into()),
                    ("status".into(), status.into()),
                ])
                .set(n);
        }
    }

    /// Records whether this replica leads.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Whether this replica leads.
    pub fn leading(&self) -> bool {
        self.leader.get() == 1
    }

    /// Records that the watch `watch` showed life now.
    pub fn watch_event(&self, watch: &str) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.watch_events
            .get_or_create(&vec![("watch".into(), watch.into())])
            .set(now);
    }

    /// Counts a watch dropped because it delivered nothing within the watch timeout.
    pub fn watch_stalled(&self, watch: &str) {
        self.watch_stalls
            .get_or_create(&vec![("watch".into(), watch.into())])
            .inc();
    }

    /// Counts a read the operator's client sent (watches have clients of their own).
    pub fn read(&self) {
        self.reads.inc();
    }

    /// Reads the reconciles sent so far (for tests and the no-polling guarantee).
    pub fn total_reads(&self) -> u64 {
        self.reads.get()
    }

    /// Records how many S3 clients are held.
    pub fn set_s3_clients(&self, n: usize) {
        self.s3_clients.set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// Total writes so far (for tests and the no-op guarantee).
    pub fn total_writes(&self) -> u64 {
        self.total_writes.load(Ordering::Relaxed)
    }

    /// Counts a reconcile that found its inputs unchanged.
    pub fn unchanged(&self) {
        self.unchanged.inc();
    }

    /// Counts a status written by the status follower.
    pub fn followed(&self) {
        self.followed.inc();
    }

    /// Statuses the status follower wrote so far.
    pub fn followed_statuses(&self) -> u64 {
        self.followed.get()
    }

    /// Reconciles that found their inputs unchanged so far.
    pub fn unchanged_reconciles(&self) -> u64 {
        self.unchanged.get()
    }

    /// Node `GET /state` reads of the capacity reader so far, answered or not.
    pub fn node_state_reads(&self) -> u64 {
        ["ok", "unreachable", "silent", "bad_answer"]
            .into_iter()
            .filter_map(|result| {
                self.node_state_reads
                    .get(&vec![
                        ("reader".to_string(), "capacity".to_string()),
                        ("result".to_string(), result.to_string()),
                    ])
                    .map(|c| c.get())
            })
            .sum()
    }

    /// Successful reconciles so far.
    pub fn ok_reconciles(&self) -> u64 {
        self.reconciles
            .get(&vec![("result".into(), "ok".into())])
            .map_or(0, |c| c.get())
    }

    /// The Prometheus text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let encoded = encode_registry(&mut out, &self.registry)
            .and_then(|()| encode_registry(&mut out, &lock(&self.exported)))
            .and_then(|()| encode_eof(&mut out));
        match encoded {
            Ok(()) => out,
            Err(_) => String::from("# metrics could not be encoded\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted_by_reason() {
        let m = Metrics::default();
        m.failed(Reason::ChildRejected);
        m.failed(Reason::ChildRejected);
        m.failed(Reason::ApiUnavailable);
        assert_eq!(m.failures(Reason::ChildRejected), 2);
        assert_eq!(m.failures(Reason::StoreNotFound), 0);
        let text = m.encode();
        assert!(
            text.contains("celld_operator_reconcile_errors_total{reason=\"ChildRejected\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("celld_operator_reconcile_errors_total{reason=\"ApiUnavailable\"} 1"),
            "{text}"
        );
    }
}
