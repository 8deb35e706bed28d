//! Percentiles of request latencies, by the nearest-rank method.

use std::time::Duration;

/// The 50th, 90th and 99th percentiles of a set of latencies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Percentiles {
    /// How many latencies there were.
    pub count: u64,
    /// Half of them took at most this long.
    pub p50: Duration,
    /// 90 % took at most this long.
    pub p90: Duration,
    /// 99 % took at most this long.
    pub p99: Duration,
}

impl Percentiles {
    /// The percentiles of `latencies` (in any order; sorted here), all zero when there is none.
    pub fn of(mut latencies: Vec<Duration>) -> Self {
        latencies.sort_unstable();
        Percentiles {
            count: latencies.len() as u64,
            p50: nearest_rank(&latencies, 50),
            p90: nearest_rank(&latencies, 90),
            p99: nearest_rank(&latencies, 99),
        }
    }
}

/// The smallest value at least `percent` % of `sorted` are at or below (zero when empty).
fn nearest_rank(sorted: &[Duration], percent: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * percent).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn percentiles_are_nearest_ranks() {
        // 1..=100 ms, shuffled.
        let latencies: Vec<Duration> = (1..=100).rev().map(ms).collect();
        let p = Percentiles::of(latencies);
        assert_eq!(
            (p.count, p.p50, p.p90, p.p99),
            (100, ms(50), ms(90), ms(99))
        );
    }

    #[test]
    fn a_few_latencies_give_their_upper_ones() {
        let p = Percentiles::of(vec![ms(3), ms(1), ms(2)]);
        assert_eq!((p.p50, p.p90, p.p99), (ms(2), ms(3), ms(3)));
        let one = Percentiles::of(vec![ms(7)]);
        assert_eq!((one.p50, one.p99), (ms(7), ms(7)));
        assert_eq!(Percentiles::of(Vec::new()), Percentiles::default());
    }
}
