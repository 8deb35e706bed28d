//! When the operator's heap is worth handing back to the system: for a while after fleets were
//! deleted. Housekeeping counts the fleets and asks; the binary's runtime threads have the
//! allocator collect their heaps when they go idle after a request they have not served yet.
//! At a steady fleet count nothing is asked, and collecting costs nothing.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Housekeeping rounds (of 5 s) a release is asked in after the fleet count fell: two minutes,
/// in which the children of the deleted fleets are garbage-collected, their last resyncs leave
/// the queue (within the 60 s resync) and the connections their reconciles opened close (idle
/// for 90 s).
pub const ROUNDS_AFTER_A_DELETION: u32 = 24;

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
    /// One housekeeping round that counted `fleets`: asks a release when there are fewer than
    /// the round before, and in the next [`ROUNDS_AFTER_A_DELETION`] rounds. Returns whether
    /// it asked.
    pub fn round(&self, fleets: usize) -> bool {
        if fleets < self.fleets.swap(fleets, Ordering::Relaxed) {
            self.rounds_left
                .store(ROUNDS_AFTER_A_DELETION, Ordering::Relaxed);
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
    fn a_release_is_asked_after_deletions_only() {
        let release = HeapRelease::default();
        let asked_at =
            |counts: &[usize]| -> Vec<bool> { counts.iter().map(|n| release.round(*n)).collect() };
        assert_eq!(asked_at(&[0, 300, 1000, 1000]), [false; 4]);
        let before = asked();
        let rounds = ROUNDS_AFTER_A_DELETION as usize;
        let after_a_deletion = asked_at(&vec![900; rounds + 1]);
        assert!(after_a_deletion[..rounds].iter().all(|asked| *asked));
        assert!(!after_a_deletion[rounds]);
        assert!(asked() >= before + ROUNDS_AFTER_A_DELETION as u64);
        assert_eq!(asked_at(&[950, 800, 800]), [false, true, true]);
    }
}
