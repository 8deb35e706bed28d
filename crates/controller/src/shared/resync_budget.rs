//! The resync budget: each periodic reconcile of a settled fleet reads its deployment pointer
//! from the bucket, which is most of what an idle operator spends. Above
//! `--resyncs-per-second` times the resync period in fleets, the period stretches so the
//! reconciles stay at that rate: 10,000 fleets are each looked at every 200 s at 50 a second
//! instead of every 60 s. A deploy through `kubectl celld deploy` or `spec.source` is seen at
//! once whatever the period (the fleet's annotation or its deploy Job triggers a reconcile);
//! only a pointer written to the bucket by other means waits for it. Pure.

use std::time::Duration;

/// `period`, or longer when `fleets` fleets resynced every `period` would be more than
/// `per_second` reconciles a second.
pub fn stretched(period: Duration, fleets: usize, per_second: u32) -> Duration {
    let per_second = u64::from(per_second.max(1));
    let fleets = u64::try_from(fleets).unwrap_or(u64::MAX);
    let spread = Duration::from_millis(fleets.saturating_mul(1_000) / per_second);
    period.max(spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn few_fleets_keep_the_period() {
        assert_eq!(stretched(S(60), 0, 50), S(60));
        assert_eq!(stretched(S(60), 3_000, 50), S(60));
        assert_eq!(stretched(S(15), 750, 50), S(15));
    }

    #[test]
    fn many_fleets_stretch_it_to_the_rate() {
        assert_eq!(stretched(S(60), 10_000, 50), S(200));
        assert_eq!(stretched(S(60), 3_001, 50), Duration::from_millis(60_020));
        assert_eq!(stretched(S(15), 10_000, 50), S(200));
        assert_eq!(stretched(S(60), 1_000, 1), S(1_000));
    }
}
