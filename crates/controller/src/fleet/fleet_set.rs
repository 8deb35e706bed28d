//! Whether the set of fleets moved since the last housekeeping round that forgot deleted
//! fleets: that forgetting walks a dozen per-fleet maps, a lookup per fleet in each, which at
//! 10,000 idle fleets was a third of the operator's idle CPU while nothing was deleted. A
//! round compares a fingerprint of every fleet's uid and resourceVersion (one cheap pass) and
//! forgets only when it moved, and at least every [`FORGET_AT_LEAST_EVERY`] rounds (an entry a
//! reconcile added for a fleet deleted while it ran goes then).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Rounds between two forgettings, whatever the fingerprint says.
pub const FORGET_AT_LEAST_EVERY: u32 = 12;

/// The fingerprint of a set of fleets, built one fleet at a time in any order.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    sum: u64,
    count: u64,
}

impl Fingerprint {
    /// Adds the fleet `uid` at `resource_version`.
    pub fn add(&mut self, uid: &str, resource_version: &str) {
        let mut hasher = DefaultHasher::new();
        (uid, resource_version).hash(&mut hasher);
        self.sum = self.sum.wrapping_add(hasher.finish());
        self.count += 1;
    }

    fn value(self) -> u64 {
        self.sum ^ self.count.rotate_left(32)
    }
}

/// The fingerprint at the last forgetting, and the rounds since.
#[derive(Debug, Default)]
pub struct FleetSet {
    last: AtomicU64,
    rounds: AtomicU32,
}

impl FleetSet {
    /// Whether this round, whose fleets give `now`, should forget deleted fleets.
    pub fn forget_now(&self, now: Fingerprint) -> bool {
        let rounds = self.rounds.fetch_add(1, Ordering::Relaxed);
        let moved = self.last.swap(now.value(), Ordering::Relaxed) != now.value();
        if moved || rounds.is_multiple_of(FORGET_AT_LEAST_EVERY) {
            self.rounds.store(1, Ordering::Relaxed);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(fleets: &[(&str, &str)]) -> Fingerprint {
        let mut f = Fingerprint::default();
        for (uid, rv) in fleets {
            f.add(uid, rv);
        }
        f
    }

    #[test]
    fn the_fingerprint_is_of_the_set_not_the_order() {
        assert_eq!(
            set(&[("a", "1"), ("b", "2")]),
            set(&[("b", "2"), ("a", "1")])
        );
        assert_ne!(
            set(&[("a", "1"), ("b", "2")]),
            set(&[("a", "1"), ("b", "3")])
        );
        assert_ne!(set(&[("a", "1")]), set(&[("a", "1"), ("b", "2")]));
    }

    #[test]
    fn forgets_on_the_first_round_when_the_set_moved_and_every_twelfth_round() {
        let fleets = FleetSet::default();
        let one = set(&[("a", "1")]);
        assert!(fleets.forget_now(one), "the first round");
        let quiet: Vec<bool> = (0..FORGET_AT_LEAST_EVERY - 1)
            .map(|_| fleets.forget_now(one))
            .collect();
        assert!(quiet.iter().all(|f| !f), "{quiet:?}");
        assert!(fleets.forget_now(one), "the twelfth round forgets anyway");
        assert!(!fleets.forget_now(one));
        assert!(fleets.forget_now(set(&[])), "a fleet was deleted");
        assert!(fleets.forget_now(one), "one was created");
        assert!(!fleets.forget_now(one));
    }
}
