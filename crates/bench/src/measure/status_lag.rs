//! The status lag of a run: for each fleet without spec.source (their Ready waits for the
//! publish of their source), how long after the bench's watch saw its StatefulSet ready it saw
//! the fleet `Ready=True`. Given as its percentiles and its largest, and, over the fleets and for
//! the largest, where that time went, from the audit log's record of the status write that said
//! Ready: until the API server received it (the operator's part, its watch of the StatefulSet
//! included), in the API server, and from the write's completion to the bench's watch.

use super::clock::Anchor;
use super::readiness::{Seen, lags};
use crate::audit::{Percentiles, StatusWrite, StatusWrites};
use jiff::Timestamp;
use std::time::{Duration, Instant};

/// The status lag over a run's fleets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusLag {
    /// Its percentiles over the fleets (and how many fleets).
    pub spread: Percentiles,
    /// The largest lag.
    pub max: Duration,
    /// Over the fleets whose Ready write the audit log has, the percentiles of the time from
    /// their StatefulSet seen ready until the API server received that write
    /// ([`Split::to_write`]).
    pub to_write: Percentiles,
    /// Over the same fleets, the percentiles of the time that write took in the API server.
    pub in_server: Percentiles,
    /// Where the largest lag went; `None` when no fleet had one, or the audit log has no status
    /// write of that fleet received before it was seen Ready.
    pub worst: Option<Split>,
}

/// Where one fleet's lag went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The fleet's name.
    pub fleet: String,
    /// From its StatefulSet seen ready until the API server received the status write that
    /// said Ready (zero when the write came first: the writer's watch saw the StatefulSet
    /// before the bench's did).
    pub to_write: Duration,
    /// From the API server's receipt of that write until its response was complete.
    pub in_server: Duration,
    /// From the write's completion until the bench's watch saw the fleet Ready.
    pub to_watch: Duration,
}

/// The status lag of the fleets `fleets` saw Ready after `statefulsets` saw their StatefulSet
/// ready, leaving out the fleets with spec.source; `writes` are the status writes in the audit
/// log, timed by the wall clock `anchor` ties the bench's instants to.
pub fn measure(
    statefulsets: &Seen,
    fleets: &Seen,
    anchor: &Anchor,
    writes: &StatusWrites,
) -> StatusLag {
    let lags: Vec<(&String, Instant, Duration)> = lags(
        &statefulsets.ready,
        fleets
            .ready
            .iter()
            .filter(|(name, _)| !crate::workload::has_source(name)),
    )
    .collect();
    let split_of = |&(name, ready, lag): &(&String, Instant, Duration)| {
        writes.get(name).and_then(|w| {
            split(
                name,
                anchor.wall(ready - lag),
                anchor.wall(ready),
                w.as_slice(),
            )
        })
    };
    let Some(largest) = lags.iter().max_by_key(|(_, _, lag)| *lag) else {
        return StatusLag::default();
    };
    let splits: Vec<Split> = lags.iter().filter_map(split_of).collect();
    StatusLag {
        spread: Percentiles::of(lags.iter().map(|(_, _, lag)| *lag).collect()),
        max: largest.2,
        to_write: Percentiles::of(splits.iter().map(|s| s.to_write).collect()),
        in_server: Percentiles::of(splits.iter().map(|s| s.in_server).collect()),
        worst: split_of(largest),
    }
}

/// Where the time from `sts_ready` to `seen_ready` went: the Ready write is the last one the
/// API server received before the fleet was seen Ready (a watch can hand out an object before
/// the write's response is complete).
fn split(
    fleet: &str,
    sts_ready: Timestamp,
    seen_ready: Timestamp,
    writes: &[StatusWrite],
) -> Option<Split> {
    let write = writes
        .iter()
        .filter(|w| w.received <= seen_ready)
        .max_by_key(|w| w.received)?;
    let between = |from: Timestamp, to: Timestamp| {
        Duration::try_from(to.duration_since(from)).unwrap_or_default()
    };
    Some(Split {
        fleet: fleet.to_string(),
        to_write: between(sts_ready, write.received),
        in_server: between(write.received, write.completed),
        to_watch: between(write.completed, seen_ready),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn seen(at: &[(&str, Instant)]) -> Seen {
        Seen {
            ready: at.iter().map(|(n, t)| (n.to_string(), *t)).collect(),
            ..Seen::default()
        }
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_lag_is_spread_over_the_fleets_without_source_and_the_worst_is_split() {
        let anchor = Anchor::now();
        let t0 = anchor.instant();
        // f0 declares spec.source (one in 50 does): its long lag is left out.
        assert!(crate::workload::has_source("f0"));
        let sts = seen(&[("f0", t0), ("f1", t0), ("f2", t0 + ms(100)), ("f3", t0)]);
        let fleets = seen(&[
            ("f0", t0 + ms(60_000)),
            ("f1", t0 + ms(300)),
            ("f2", t0 + ms(4_100)),
            // Ready before the bench saw its StatefulSet ready: no lag.
            ("f3", t0.checked_sub(ms(1)).unwrap_or(t0)),
        ]);
        let w = |received: u64, completed: u64| StatusWrite {
            received: anchor.wall(t0 + ms(received)),
            completed: anchor.wall(t0 + ms(completed)),
        };
        // f2's Ready write: received at 1.6 s, complete at 3.9 s, seen at 4.1 s; its first
        // write (Ready=False) before it, and one after it was seen, are not the Ready one.
        let writes: StatusWrites = HashMap::from([(
            "f2".to_string(),
            vec![w(10, 20), w(1_600, 3_900), w(5_000, 5_010)],
        )]);
        let writes: StatusWrites = writes
            .into_iter()
            .chain([("f1".to_string(), vec![w(50, 250)])])
            .collect();
        let lag = measure(&sts, &fleets, &anchor, &writes);
        assert_eq!(lag.max, ms(4_000));
        // Over f1 and f2, the fleets whose Ready write is in the log.
        assert_eq!(
            (lag.to_write.count, lag.to_write.p50, lag.to_write.p99),
            (2, ms(50), ms(1_500))
        );
        assert_eq!((lag.in_server.p50, lag.in_server.p99), (ms(200), ms(2_300)));
        assert_eq!(lag.spread.count, 3);
        assert_eq!((lag.spread.p50, lag.spread.p99), (ms(300), ms(4_000)));
        assert_eq!(
            lag.worst,
            Some(Split {
                fleet: "f2".into(),
                to_write: ms(1_500),
                in_server: ms(2_300),
                to_watch: ms(200),
            })
        );
    }

    #[test]
    fn without_its_write_in_the_log_the_worst_is_not_split() {
        let anchor = Anchor::now();
        let t0 = anchor.instant();
        let lag = measure(
            &seen(&[("f1", t0)]),
            &seen(&[("f1", t0 + ms(700))]),
            &anchor,
            &StatusWrites::new(),
        );
        assert_eq!((lag.max, lag.worst), (ms(700), None));
        assert_eq!(lag.to_write, Percentiles::default());
        assert_eq!(
            measure(&seen(&[]), &seen(&[]), &anchor, &StatusWrites::new()),
            StatusLag::default()
        );
    }
}
