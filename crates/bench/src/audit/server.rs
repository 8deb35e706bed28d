//! Every request the API server handled, from every user (the controllers, the scheduler,
//! kwok, the bench, the operator): its load during a window, as a rate and latencies.
//!
//! Each audit ID is counted once. A request's latency is from when the API server received it
//! to its `ResponseComplete` stage; a long-running request (a watch, logged when its response
//! starts) has none: it is open until someone closes it.
//!
//! The API server allocates a Service's cluster IP by creating an IPAddress object while it holds
//! one lock, so Services with a cluster IP are created one at a time: those IPAddress creates
//! ([`ServerLoad::cluster_ips`]) take turns, and how long each takes paces the public Services.

use super::event::{Event, Stage, is_write};
use super::percentiles::Percentiles;
use super::user::ByResource;
use jiff::Timestamp;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// One request, compactly: a large run logs millions.
#[derive(Debug, Clone, Copy)]
struct Record {
    /// When it was received, nanoseconds since the Unix epoch.
    received_ns: i64,
    /// Its latency in microseconds; [`LONG_RUNNING`] for a long-running request.
    latency_us: u32,
    /// Whether it changes something.
    write: bool,
    /// Its resource and verb, as an index into [`ServerRequests::kinds`].
    kind: u32,
}

/// The latency of a long-running request: none.
const LONG_RUNNING: u32 = u32::MAX;

/// The request that allocates a Service's cluster IP: the API server's own create of an
/// IPAddress object.
const CLUSTER_IP: (&str, &str) = ("ipaddresses", "create");

/// Every request of every user, as the audit log describes them.
#[derive(Debug, Clone, Default)]
pub struct ServerRequests {
    records: Vec<Record>,
    /// Long-running requests whose response started, by audit ID, until their last event.
    open: HashSet<String>,
    /// Every (resource, verb) seen, once each.
    kinds: Vec<(String, String)>,
    /// Where each is in `kinds`.
    kind_index: HashMap<(String, String), u32>,
}

impl ServerRequests {
    /// Adds one audit event.
    pub fn add(&mut self, event: &Event) {
        let long_running = match event.stage {
            Stage::ResponseStarted => {
                if !self.open.insert(event.audit_id.clone()) {
                    return;
                }
                true
            }
            Stage::ResponseComplete | Stage::Panic => {
                if self.open.remove(&event.audit_id) {
                    // Counted when its response started.
                    return;
                }
                false
            }
            Stage::Other => return,
        };
        let latency_us = if long_running {
            LONG_RUNNING
        } else {
            let took = event.at.duration_since(event.received);
            u32::try_from(took.as_micros().max(0)).unwrap_or(LONG_RUNNING - 1)
        };
        let key = (event.resource.clone(), event.verb.clone());
        let kind = match self.kind_index.get(&key) {
            Some(&kind) => kind,
            None => {
                let kind = u32::try_from(self.kinds.len()).unwrap_or(u32::MAX);
                self.kinds.push(key.clone());
                self.kind_index.insert(key, kind);
                kind
            }
        };
        self.records.push(Record {
            received_ns: nanos(event.received),
            latency_us,
            write: is_write(&event.verb),
            kind,
        });
    }

    /// Everyone's writes received in `[from, to)`, counted by resource and verb.
    pub fn writes_by_resource(&self, from: Timestamp, to: Timestamp) -> ByResource {
        let (from, to) = (nanos(from), nanos(to));
        let mut counts = ByResource::new();
        for r in self
            .records
            .iter()
            .filter(|r| r.write && r.received_ns >= from && r.received_ns < to)
        {
            if let Some(kind) = usize::try_from(r.kind).ok().and_then(|k| self.kinds.get(k)) {
                *counts.entry(kind.clone()).or_default() += 1;
            }
        }
        counts
    }

    /// The load of the requests received in `[from, to)`.
    pub fn load(&self, from: Timestamp, to: Timestamp) -> ServerLoad {
        let (from, to) = (nanos(from), nanos(to));
        let cluster_ip = self
            .kind_index
            .get(&(CLUSTER_IP.0.to_string(), CLUSTER_IP.1.to_string()))
            .copied();
        let mut requests = 0;
        let mut all = Vec::new();
        let mut writes = Vec::new();
        let mut cluster_ips = Vec::new();
        for r in self
            .records
            .iter()
            .filter(|r| r.received_ns >= from && r.received_ns < to)
        {
            requests += 1;
            if r.latency_us == LONG_RUNNING {
                continue;
            }
            let latency = Duration::from_micros(u64::from(r.latency_us));
            all.push(latency);
            if r.write {
                writes.push(latency);
            }
            if Some(r.kind) == cluster_ip {
                cluster_ips.push(latency);
            }
        }
        ServerLoad {
            requests,
            window: Duration::from_nanos(u64::try_from(to - from).unwrap_or(0)),
            all: Percentiles::of(all),
            writes: Percentiles::of(writes),
            cluster_ips: Percentiles::of(cluster_ips),
        }
    }
}

fn nanos(t: Timestamp) -> i64 {
    i64::try_from(t.as_nanosecond()).unwrap_or(i64::MAX)
}

/// What the API server handled during a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerLoad {
    /// Requests received in it, every user's, each counted once.
    pub requests: u64,
    /// How long it was.
    pub window: Duration,
    /// The latencies of every request that completed (long-running ones left out).
    pub all: Percentiles,
    /// The latencies of the writes among them.
    pub writes: Percentiles,
    /// The latencies of the cluster IPs allocated among them (the API server's IPAddress
    /// creates), one at a time.
    pub cluster_ips: Percentiles,
}

impl ServerLoad {
    /// Requests per second of the window (0 for an empty window).
    pub fn rate(&self) -> f64 {
        let seconds = self.window.as_secs_f64();
        if seconds > 0.0 {
            self.requests as f64 / seconds
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::tests::line;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn add(r: &mut ServerRequests, id: &str, verb: &str, stage: &str, at: (&str, &str)) {
        r.add(&Event::parse(&line(id, "anyone", verb, stage, at.0, at.1, Some(200))).unwrap());
    }

    fn fixture() -> ServerRequests {
        let mut r = ServerRequests::default();
        add(
            &mut r,
            "a",
            "get",
            "ResponseComplete",
            ("2026-01-01T00:00:01Z", "2026-01-01T00:00:01.010Z"),
        );
        add(
            &mut r,
            "b",
            "patch",
            "ResponseComplete",
            ("2026-01-01T00:00:02Z", "2026-01-01T00:00:02.030Z"),
        );
        // A watch: counted once, when its response starts; it has no latency.
        add(
            &mut r,
            "c",
            "watch",
            "ResponseStarted",
            ("2026-01-01T00:00:03Z", "2026-01-01T00:00:03.001Z"),
        );
        add(
            &mut r,
            "c",
            "watch",
            "ResponseComplete",
            ("2026-01-01T00:00:03Z", "2026-01-01T00:05:03Z"),
        );
        add(
            &mut r,
            "d",
            "create",
            "ResponseComplete",
            ("2026-01-01T00:00:09Z", "2026-01-01T00:00:09.050Z"),
        );
        r
    }

    #[test]
    fn each_request_is_counted_once_and_watches_have_no_latency() {
        let load = fixture().load(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:10Z"));
        assert_eq!(load.requests, 4);
        assert_eq!(load.window, Duration::from_secs(10));
        assert_eq!(load.rate(), 0.4);
        assert_eq!(load.all.count, 3);
        assert_eq!(load.all.p50, Duration::from_millis(30));
        assert_eq!(load.all.p99, Duration::from_millis(50));
        assert_eq!(load.writes.count, 2);
        assert_eq!(load.writes.p50, Duration::from_millis(30));
    }

    #[test]
    fn cluster_ips_are_the_api_server_s_ipaddress_creates() {
        let mut r = fixture();
        for (id, at, took) in [("e", "04", "04.020"), ("f", "05", "05.040")] {
            let text = line(
                id,
                "system:apiserver",
                "create",
                "ResponseComplete",
                &format!("2026-01-01T00:00:{at}Z"),
                &format!("2026-01-01T00:00:{took}Z"),
                Some(201),
            )
            .replace("statefulsets", "ipaddresses");
            r.add(&Event::parse(&text).unwrap());
        }
        let load = r.load(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:10Z"));
        assert_eq!(load.cluster_ips.count, 2, "not the StatefulSet create");
        assert_eq!(load.cluster_ips.p50, Duration::from_millis(20));
        assert_eq!(load.writes.count, 4);
        let before = fixture().load(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:10Z"));
        assert_eq!(before.cluster_ips.count, 0);
    }

    #[test]
    fn everyone_s_writes_are_counted_by_resource_and_verb() {
        let counts =
            fixture().writes_by_resource(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:09Z"));
        assert_eq!(
            counts.values().sum::<u64>(),
            1,
            "the patch; the create is outside"
        );
        assert_eq!(
            counts.keys().next().map(|(_, verb)| verb.as_str()),
            Some("patch")
        );
    }

    #[test]
    fn the_window_takes_what_was_received_in_it() {
        let load = fixture().load(ts("2026-01-01T00:00:02Z"), ts("2026-01-01T00:00:09Z"));
        assert_eq!(load.requests, 2, "the patch and the watch");
        assert_eq!(load.all.count, 1);
        assert_eq!(ServerLoad::default().rate(), 0.0);
    }
}
