//! When the operator's heap is worth handing back to the system: for a while after the fleet
//! count changed. Fleets deleted leave their state and their last reconciles' memory free;
//! fleets created leave the memory their first reconciles used for a while (request and answer
//! bodies, plans, connections) free in the allocator's pages. Housekeeping counts the fleets and
//! asks; the binary's runtime threads have the allocator collect their heaps when they go idle
//! after a request they have not served yet. At a steady fleet count nothing is asked, and
//! collecting costs nothing.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Housekeeping rounds (of 5 s) a release is asked in after the fleet count changed: two
/// minutes, in which the children of deleted fleets are garbage-collected, their last resyncs
/// leave the queue (within the 60 s resync), new fleets' first rollouts end and the connections
/// either opened close (idle for 90 s).
pub const ROUNDS_AFTER_A_CHANGE: u32 = 24;

static ASKED: AtomicU64 = AtomicU64::new(0);

/// How many releases were asked so far: a thread that last saw another number collects.
pub fn asked() -> u64 {
    ASKED.load(Ordering::Relaxed)
}

/// The fleet count of the last housekeeping round, and the rounds a release is still asked in.
#[derive(Debug, Default)]
pub struct HeapRelease {
    fleets: AtomicUsize,
    rounds_left: AtomicU32,
}

impl HeapRelease {
    /// One housekeeping round that counted `fleets`: asks a release when there are more or
    /// fewer than the round before, and in the next [`ROUNDS_AFTER_A_CHANGE`] rounds. Returns
    /// whether it asked.
    pub fn round(&self, fleets: usize) -> bool {
        if fleets != self.fleets.swap(fleets, Ordering::Relaxed) {
            self.rounds_left
                .store(ROUNDS_AFTER_A_CHANGE, Ordering::Relaxed);
        }
        let left = self.rounds_left.load(Ordering::Relaxed);
        if left == 0 {
            return false;
        }
        self.rounds_left.store(left - 1, Ordering::Relaxed);
        ASKED.fetch_add(1, Ordering::Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_asked_for_a_while_after_the_fleet_count_changed() {
        let release = HeapRelease::default();
        let asked_at =
            |counts: &[usize]| -> Vec<bool> { counts.iter().map(|n| release.round(*n)).collect() };
        let rounds = ROUNDS_AFTER_A_CHANGE as usize;
        assert_eq!(asked_at(&[0, 0]), [false, false]);
        let before = asked();
        let after_creations = asked_at(&vec![1000; rounds + 1]);
        assert!(after_creations[..rounds].iter().all(|asked| *asked));
        assert!(!after_creations[rounds]);
        assert!(asked() >= before + ROUNDS_AFTER_A_CHANGE as u64);
        let after_a_deletion = asked_at(&vec![900; rounds + 1]);
        assert!(after_a_deletion[..rounds].iter().all(|asked| *asked));
        assert!(!after_a_deletion[rounds]);
        assert_eq!(asked_at(&[900, 900]), [false, false]);
    }
}
