//! Whether housekeeping looks at every fleet this round: the fleets-by-Ready gauge and the
//! forgetting of deleted fleets read only the fleets' cache, so while its watch brought no
//! change they would find what the last look found. At 10,000 idle fleets a look every round
//! was an eighth of the operator's idle CPU; a round now looks when the fleets' watch brought a
//! change since the last look, and at least every [`LOOK_AT_LEAST_EVERY`] rounds (an entry a
//! reconcile added for a fleet deleted while it ran goes then, and so do the fleets a relist
//! found gone without an event of their own).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Rounds between two looks, whatever the fleets' watch brought.
pub const LOOK_AT_LEAST_EVERY: u32 = 12;

/// The fleets' changes counted at the last look, and the rounds since.
#[derive(Debug, Default)]
pub struct FleetSet {
    last: AtomicU64,
    rounds: AtomicU32,
}

impl FleetSet {
    /// Whether this round looks at every fleet, the fleets' watch having brought `changes`
    /// changes so far (read before the fleets are).
    pub fn look_now(&self, changes: u64) -> bool {
        let rounds = self.rounds.fetch_add(1, Ordering::Relaxed);
        let moved = self.last.swap(changes, Ordering::Relaxed) != changes;
        if moved || rounds.is_multiple_of(LOOK_AT_LEAST_EVERY) {
            self.rounds.store(1, Ordering::Relaxed);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_on_the_first_round_after_a_change_and_every_twelfth_round() {
        let fleets = FleetSet::default();
        assert!(fleets.look_now(0), "the first round");
        let quiet: Vec<bool> = (0..LOOK_AT_LEAST_EVERY - 1)
            .map(|_| fleets.look_now(0))
            .collect();
        assert!(quiet.iter().all(|look| !look), "{quiet:?}");
        assert!(fleets.look_now(0), "the twelfth round looks anyway");
        assert!(!fleets.look_now(0));
        assert!(fleets.look_now(3), "the watch brought changes");
        assert!(!fleets.look_now(3));
        assert!(fleets.look_now(4), "one more");
        assert!(!fleets.look_now(4));
    }
}
