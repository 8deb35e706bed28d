//! The retry backoff of every controller's objects: 1 s after a first failed reconcile,
//! doubling up to 5 minutes, forgotten after a success or once the object has not failed for
//! longer than the longest wait (it was deleted, or fixed by a change that reconciled it).

use crate::locks::lock;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest wait between two retries.
const LONGEST: Duration = Duration::from_secs(300);

/// Consecutive failures per object, with when the last one happened.
#[derive(Debug, Default)]
pub struct Backoff {
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl Backoff {
    /// Records a failure of `key` and returns how long to wait before retrying.
    pub fn failed(&self, key: &str) -> Duration {
        let mut failures = lock(&self.failures);
        let (n, at) = failures
            .entry(key.to_string())
            .or_insert((0, Instant::now()));
        *n = n.saturating_add(1);
        *at = Instant::now();
        let secs = 1u64 << (*n - 1).min(9);
        Duration::from_secs(secs).min(LONGEST)
    }

    /// Forgets the failures of `key` after a successful reconcile.
    pub fn succeeded(&self, key: &str) {
        lock(&self.failures).remove(key);
    }

    /// Forgets every object whose last failure is more than twice the longest wait before
    /// `now`: an object still failing is retried well within that.
    pub fn forget_stale(&self, now: Instant) {
        crate::map_retain::retain(&mut lock(&self.failures), |_, (_, at)| {
            now.saturating_duration_since(*at) <= LONGEST * 2
        });
    }

    /// How many objects have failures on record.
    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.failures).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_five_minutes_and_resets_on_success() {
        let b = Backoff::default();
        let waits: Vec<u64> = (0..11).map(|_| b.failed("fleet/a/b").as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
        assert_eq!(b.failed("store/a/s"), Duration::from_secs(1));
        b.succeeded("fleet/a/b");
        assert_eq!(b.failed("fleet/a/b"), Duration::from_secs(1));
    }

    #[test]
    fn an_object_that_stopped_failing_is_forgotten() {
        let b = Backoff::default();
        b.failed("preview/a/p");
        b.forget_stale(Instant::now());
        assert_eq!(b.len(), 1);
        b.forget_stale(Instant::now() + LONGEST * 2 + Duration::from_secs(1));
        assert_eq!(b.len(), 0);
    }
}
