//! Whether the operator's caches keep up with the API server.
//!
//! Every watch asks the API server to end it after [`WatchSettings::timeout`] (sending a
//! bookmark just before), and kube's watcher resumes it from the last resource version; a watch
//! that delivers nothing, not even that bookmark, within the timeout plus 5 s is dropped and
//! resumed the same way. So a healthy watch shows life at least once per timeout: a list
//! response, a new watch accepted, an event or a bookmark. A watch silent for longer than
//! [`WatchSettings::stale_after`] cannot recover on its own, and `/healthz` fails so that
//! Kubernetes restarts the replica.

use crate::metrics::Metrics;
use kube::runtime::watcher;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Timing of the watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchSettings {
    /// The API server ends every watch after this long; the operator resumes it.
    pub timeout: Duration,
    /// A watch silent for longer than this makes the replica unhealthy.
    pub stale_after: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self::new(20, 120)
    }
}

impl WatchSettings {
    /// Watches ended by the API server every `timeout_seconds` (at least 1), unhealthy after
    /// `stale_seconds` of silence (at least twice the timeout plus 10 s: room for one failed
    /// attempt to resume).
    pub fn new(timeout_seconds: u64, stale_seconds: u64) -> Self {
        let timeout = timeout_seconds.max(1);
        Self {
            timeout: Duration::from_secs(timeout),
            stale_after: Duration::from_secs(stale_seconds.max(2 * timeout + 10)),
        }
    }

    /// The watcher configuration every watch starts from.
    pub fn watcher_config(&self) -> watcher::Config {
        let seconds = u32::try_from(self.timeout.as_secs()).unwrap_or(u32::MAX);
        watcher::Config::default().timeout(seconds)
    }
}

/// A watch silent for too long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    /// The watch's name (`<controller>/<kind>`).
    pub watch: String,
    /// How long it has been silent.
    pub silent_for: Duration,
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "watch {} silent for {}s",
            self.watch,
            self.silent_for.as_secs()
        )
    }
}

/// One watch: when it last showed life.
pub struct WatchStream {
    name: String,
    last: Mutex<Instant>,
    metrics: Arc<Metrics>,
}

impl WatchStream {
    /// The watch's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The watch showed life at `now`: a list or watch response, an event or a bookmark.
    pub fn beat_at(&self, now: Instant) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        *last = (*last).max(now);
        drop(last);
        self.metrics.watch_event(&self.name);
    }

    /// The watch showed life now.
    pub fn beat(&self) {
        self.beat_at(Instant::now());
    }

    /// The operator dropped the watch before the API server ended it: it delivered nothing
    /// within the bound.
    pub fn stalled(&self) {
        self.metrics.watch_stalled(&self.name);
    }

    fn silent_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(*self.last.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The watches of the running controllers.
pub struct WatchHealth {
    settings: WatchSettings,
    metrics: Arc<Metrics>,
    streams: Mutex<Vec<Arc<WatchStream>>>,
}

impl WatchHealth {
    /// No watches yet.
    pub fn new(settings: WatchSettings, metrics: Arc<Metrics>) -> Self {
        Self {
            settings,
            metrics,
            streams: Mutex::new(Vec::new()),
        }
    }

    /// The timing of the watches.
    pub fn settings(&self) -> WatchSettings {
        self.settings
    }

    /// Registers the watch `name`, alive as of `now`.
    pub fn stream_at(&self, name: &str, now: Instant) -> Arc<WatchStream> {
        let stream = Arc::new(WatchStream {
            name: name.to_string(),
            last: Mutex::new(now),
            metrics: self.metrics.clone(),
        });
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(stream.clone());
        stream
    }

    /// Registers the watch `name`, alive as of now.
    pub fn stream(&self, name: &str) -> Arc<WatchStream> {
        self.stream_at(name, Instant::now())
    }

    /// Forgets every watch (the controllers stopped).
    pub fn forget_all(&self) {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The watches silent at `now` for longer than the bound.
    pub fn stale_at(&self, now: Instant) -> Vec<Stale> {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|s| Stale {
                watch: s.name.clone(),
                silent_for: s.silent_for(now),
            })
            .filter(|s| s.silent_for > self.settings.stale_after)
            .collect()
    }

    /// The watches silent for longer than the bound now.
    pub fn stale(&self) -> Vec<Stale> {
        self.stale_at(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health() -> (WatchHealth, Instant) {
        let settings = WatchSettings::new(20, 120);
        (
            WatchHealth::new(settings, Arc::new(Metrics::default())),
            Instant::now(),
        )
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn a_watch_that_keeps_showing_life_stays_healthy() {
        let (health, t0) = health();
        let fleets = health.stream_at("fleets/CelldFleet", t0);
        for t in (20..=600).step_by(20) {
            fleets.beat_at(t0 + secs(t));
            assert_eq!(health.stale_at(t0 + secs(t + 19)), vec![], "at {t}s");
        }
    }

    #[test]
    fn a_silent_watch_turns_stale_only_after_the_bound() {
        let (health, t0) = health();
        let fleets = health.stream_at("fleets/CelldFleet", t0);
        let sets = health.stream_at("fleets/StatefulSet", t0);
        fleets.beat_at(t0 + secs(30));
        sets.beat_at(t0 + secs(30));
        assert_eq!(health.stale_at(t0 + secs(150)), vec![]);
        sets.beat_at(t0 + secs(140));
        let stale = health.stale_at(t0 + secs(151));
        assert_eq!(
            stale,
            vec![Stale {
                watch: "fleets/CelldFleet".into(),
                silent_for: secs(121)
            }]
        );
        assert_eq!(
            stale[0].to_string(),
            "watch fleets/CelldFleet silent for 121s"
        );
        // It recovers as soon as it shows life again.
        fleets.beat_at(t0 + secs(152));
        assert_eq!(health.stale_at(t0 + secs(160)), vec![]);
    }

    #[test]
    fn a_watch_that_never_started_turns_stale_too() {
        let (health, t0) = health();
        health.stream_at("stores/Secret", t0);
        assert_eq!(health.stale_at(t0 + secs(120)), vec![]);
        assert_eq!(health.stale_at(t0 + secs(121)).len(), 1);
    }

    #[test]
    fn a_late_report_never_moves_the_last_sign_of_life_back() {
        let (health, t0) = health();
        let fleets = health.stream_at("fleets/CelldFleet", t0);
        fleets.beat_at(t0 + secs(100));
        fleets.beat_at(t0 + secs(10));
        assert_eq!(health.stale_at(t0 + secs(200)), vec![]);
    }

    #[test]
    fn stopped_controllers_leave_nothing_to_judge() {
        let (health, t0) = health();
        health.stream_at("fleets/CelldFleet", t0);
        health.forget_all();
        assert_eq!(health.stale_at(t0 + secs(10_000)), vec![]);
    }

    #[test]
    fn the_bound_leaves_room_for_a_failed_resume() {
        assert_eq!(WatchSettings::new(20, 30).stale_after, secs(50));
        assert_eq!(WatchSettings::new(0, 0).timeout, secs(1));
        assert_eq!(WatchSettings::default().stale_after, secs(120));
        assert_eq!(
            WatchSettings::new(20, 120).watcher_config().timeout,
            Some(20)
        );
    }
}
