//! Resyncs fall on a shared grid: a fleet's next periodic reconcile is pushed to the next
//! multiple of the grid's spacing (counted from the operator's start), so the fleets due in the
//! same few seconds are reconciled together. At rest the operator then wakes a dozen times a
//! minute instead of once per fleet, and each wake-up serves many fleets: with 1,000 fleets
//! the wake-ups, not the reads, were most of an idle operator's CPU time (0.9 CPU-seconds a
//! minute on two cores, 0.3 on the grid).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The widest spacing of the grid: the most a resync is delayed.
pub const MAX_SPACING: Duration = Duration::from_secs(5);

/// A resync is delayed by less than this fraction of its period (a 60 s resync by less than
/// 5 s, a 2 s one by less than 167 ms).
const PERIOD_FRACTION: u32 = 12;

/// The spacing of the grid for resyncs every `period`.
pub fn spacing(period: Duration) -> Duration {
    (period / PERIOD_FRACTION).min(MAX_SPACING)
}

/// `after`, lengthened so that it ends on the grid of resyncs every `after`.
pub fn aligned(after: Duration) -> Duration {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    align(origin.elapsed(), after, spacing(after))
}

/// `after`, lengthened so that `now + after` is a multiple of `grid` (both counted from the
/// grid's origin).
fn align(now: Duration, after: Duration, grid: Duration) -> Duration {
    let grid = grid.as_nanos();
    if grid == 0 {
        return after;
    }
    let late = (now + after).as_nanos() % grid;
    if late == 0 {
        return after;
    }
    // At most `grid` (a u128 of nanoseconds below a Duration's range) is added.
    after + Duration::from_nanos(u64::try_from(grid - late).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_resync_ends_on_the_next_multiple_of_the_grid() {
        assert_eq!(align(MS(1_300), S(60), S(5)), MS(63_700));
        assert_eq!(align(MS(4_999), S(60), S(5)), MS(60_001));
        assert_eq!(align(S(7), S(60), S(5)), S(63));
    }

    #[test]
    fn a_resync_already_on_the_grid_is_kept() {
        assert_eq!(align(S(10), S(60), S(5)), S(60));
        assert_eq!(align(S(0), S(0), S(5)), S(0));
    }

    #[test]
    fn fleets_due_in_the_same_window_share_a_deadline() {
        let deadlines: Vec<Duration> = [1, 800, 2_500, 5_000]
            .into_iter()
            .map(|at| MS(at) + align(MS(at), S(60), S(5)))
            .collect();
        assert!(deadlines.iter().all(|d| *d == S(65)), "{deadlines:?}");
    }

    #[test]
    fn no_resync_is_delayed_by_a_whole_grid_or_more() {
        for at in (0..20_000).step_by(137) {
            let after = align(MS(at), S(60), S(5));
            assert!(after >= S(60) && after < S(65), "at {at} ms: {after:?}");
        }
    }

    #[test]
    fn a_zero_grid_changes_nothing() {
        assert_eq!(align(MS(1_234), S(60), Duration::ZERO), S(60));
    }

    #[test]
    fn the_spacing_is_a_twelfth_of_the_period_up_to_five_seconds() {
        assert_eq!(spacing(S(60)), S(5));
        assert_eq!(spacing(S(600)), S(5));
        assert_eq!(spacing(S(15)), MS(1_250));
        assert_eq!(spacing(S(2)), Duration::from_nanos(166_666_666));
    }

    #[test]
    fn the_process_grid_delays_by_less_than_one_spacing() {
        for period in [S(60), S(15), S(1)] {
            let after = aligned(period);
            assert!(
                after >= period && after < period + spacing(period),
                "{period:?}: {after:?}"
            );
        }
    }
}
