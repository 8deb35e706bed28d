//! What the previews run measured: previews of one parent fleet, each a fleet of its own.

use super::rate::{per_minute, seconds_per_minute};
use crate::audit::{ByResource, Tally};
use std::time::Duration;

/// Previews created on one parent fleet under one operator, until all were Ready and the
/// operator settled, then an idle window.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewsRun {
    /// Previews created.
    pub previews: usize,
    /// From the first create until every preview's fleet reported Ready=True.
    pub fleets_ready: Duration,
    /// From the first create until every preview reported phase Ready.
    pub previews_ready: Duration,
    /// The largest delay, over the previews, from its fleet's Ready=True to its phase Ready.
    pub status_lag: Duration,
    /// From the first create until the operator settled (every preview Ready, no more writes).
    pub settled: Duration,
    /// Whether its writes stopped; false when the wait for them to stop ran out.
    pub writes_stopped: bool,
    /// The operator's requests from the first create until it settled.
    pub to_settle: Tally,
    /// Its writes over the same time, by resource and verb.
    pub writes_to_settle: ByResource,
    /// The operator's requests during the idle window after it settled.
    pub idle: Tally,
    /// The idle window.
    pub idle_window: Duration,
    /// Node `GET /state` requests the operator sent during the idle window.
    pub idle_state_reads: u64,
    /// CPU time (user + system) the operator used during the idle window.
    pub idle_cpu: Duration,
    /// Resident memory with no fleet, once started, KiB.
    pub empty_rss_kib: u64,
    /// Its file-backed part, KiB.
    pub empty_file_kib: u64,
    /// Resident memory with the parent fleet only, once settled, before any preview, KiB.
    pub parent_rss_kib: u64,
    /// Resident memory once the previews settled, KiB.
    pub settled_rss_kib: u64,
    /// Its file-backed part, KiB.
    pub settled_file_kib: u64,
    /// Resident memory once as many previews again settled, KiB.
    pub doubled_rss_kib: u64,
}

impl PreviewsRun {
    /// Requests per minute of the idle window.
    pub fn idle_requests_per_minute(&self) -> f64 {
        per_minute(self.idle.requests, self.idle_window)
    }

    /// Writes per minute of the idle window.
    pub fn idle_writes_per_minute(&self) -> f64 {
        per_minute(self.idle.writes, self.idle_window)
    }

    /// Node `GET /state` requests per minute of the idle window.
    pub fn idle_state_reads_per_minute(&self) -> f64 {
        per_minute(self.idle_state_reads, self.idle_window)
    }

    /// CPU seconds per minute of the idle window.
    pub fn idle_cpu_seconds_per_minute(&self) -> f64 {
        seconds_per_minute(self.idle_cpu, self.idle_window)
    }

    /// Resident memory added per preview over the empty operator (the parent's share
    /// included), KiB.
    pub fn rss_growth_per_preview_kib(&self) -> f64 {
        self.settled_rss_kib.saturating_sub(self.empty_rss_kib) as f64 / self.previews.max(1) as f64
    }

    /// Resident memory each of the second batch of previews added, KiB: what one more preview
    /// costs once the operator's one-time costs (its code paged in, its runtime's and its
    /// caches' first allocations) are paid, as they are at 1,000 fleets.
    pub fn marginal_rss_per_preview_kib(&self) -> f64 {
        self.doubled_rss_kib.saturating_sub(self.settled_rss_kib) as f64
            / self.previews.max(1) as f64
    }

    /// Resident memory added per preview over the operator with the parent only, KiB.
    pub fn rss_growth_over_parent_per_preview_kib(&self) -> f64 {
        self.settled_rss_kib.saturating_sub(self.parent_rss_kib) as f64
            / self.previews.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_growth_is_per_preview_and_never_negative() {
        let run = PreviewsRun {
            previews: 50,
            fleets_ready: Duration::from_secs(10),
            previews_ready: Duration::from_secs(11),
            status_lag: Duration::from_millis(300),
            settled: Duration::from_secs(12),
            writes_stopped: true,
            to_settle: Tally::default(),
            writes_to_settle: ByResource::new(),
            idle: Tally {
                requests: 20,
                writes: 0,
                server_errors: 0,
            },
            idle_window: Duration::from_secs(60),
            idle_state_reads: 120,
            idle_cpu: Duration::from_millis(60),
            empty_rss_kib: 15_000,
            empty_file_kib: 12_000,
            parent_rss_kib: 17_500,
            settled_rss_kib: 20_000,
            settled_file_kib: 13_000,
            doubled_rss_kib: 22_000,
        };
        assert_eq!(run.rss_growth_per_preview_kib(), 100.0);
        assert_eq!(run.rss_growth_over_parent_per_preview_kib(), 50.0);
        assert_eq!(run.marginal_rss_per_preview_kib(), 40.0);
        assert_eq!(run.idle_requests_per_minute(), 20.0);
        assert_eq!(run.idle_cpu_seconds_per_minute(), 0.06);
        let shrunk = PreviewsRun {
            settled_rss_kib: 14_000,
            doubled_rss_kib: 13_000,
            ..run
        };
        assert_eq!(shrunk.rss_growth_per_preview_kib(), 0.0);
        assert_eq!(shrunk.marginal_rss_per_preview_kib(), 0.0);
    }
}
