//! The largest fleet count run as several pairs of floor and operator: the section that lists
//! them, and the medians its converge and idle CPU are judged on (one pair moves from run to run
//! on a shared machine; the median of several does much less).

use super::format::{mib, secs, thousands, times, verdict};
use super::targets::Targets;
use crate::results::Scale;
use std::fmt::Write as _;

/// The pairs of `s`: itself, then `repeats` when they are of its fleet count.
pub fn of<'a>(s: &'a Scale, repeats: &'a [Scale]) -> Vec<&'a Scale> {
    std::iter::once(s)
        .chain(repeats.iter().filter(|r| r.fleets() == s.fleets()))
        .collect()
}

/// The median of `values` (the mean of the middle two for an even number); NaN for none.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The median converge ratio over `pairs`.
pub fn converge(pairs: &[&Scale]) -> f64 {
    median(pairs.iter().map(|s| s.converge_ratio()).collect())
}

/// The median CPU seconds per idle minute over `pairs`.
pub fn idle_cpu(pairs: &[&Scale]) -> f64 {
    median(
        pairs
            .iter()
            .map(|s| s.operator.idle_cpu_seconds_per_minute())
            .collect(),
    )
}

/// Writes the section for the largest of `scales` when it ran more than one pair.
pub fn section(out: &mut String, scales: &[Scale], repeats: &[Scale], t: &Targets) {
    let Some(largest) = scales.last() else {
        return;
    };
    let pairs = of(largest, repeats);
    if pairs.len() < 2 {
        return;
    }
    let ratios: Vec<f64> = pairs.iter().map(|s| s.converge_ratio()).collect();
    let (low, high) = ratios
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
            (lo.min(r), hi.max(r))
        });
    let _ = writeln!(
        out,
        "\n### {} fleets, pair by pair\n\nThe floor and the operator of {} fleets ran {} times, \
alternately, each on a fresh control plane on the same fake nodes; the first pair is the table's \
column. Converge and idle CPU at this count are judged on the median of the pairs.\n",
        thousands(largest.fleets() as u64),
        thousands(largest.fleets() as u64),
        pairs.len()
    );
    let _ = writeln!(
        out,
        "| pair | floor: all fleets Ready | operator: all fleets Ready | converge ratio | requests per fleet (floor) | server errors (5xx) | CPU seconds per idle minute | resident memory after settling |\n|---|---|---|---|---|---|---|---|"
    );
    for (i, s) in pairs.iter().enumerate() {
        let n = s.fleets().max(1) as f64;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1} ({:.1}) | {} | {:.2} | {} |",
            i + 1,
            secs(s.floor.fleets_ready),
            secs(s.operator.fleets_ready),
            times(s.converge_ratio()),
            s.operator.to_settle.requests as f64 / n,
            s.floor.requests.requests as f64 / n,
            s.operator.to_settle.server_errors,
            s.operator.idle_cpu_seconds_per_minute(),
            mib(s.operator.settled_rss_kib),
        );
    }
    let median_ratio = converge(&pairs);
    let cpu = idle_cpu(&pairs);
    let _ = writeln!(
        out,
        "\nMedian converge ratio **{}** (spread {}–{}; target ≤ {:.1}×){}; median CPU per idle minute \
{cpu:.2} s (target ≤ {} s){}.",
        times(median_ratio),
        times(low),
        times(high),
        t.converge,
        verdict(median_ratio <= t.converge),
        t.idle_cpu,
        verdict(cpu <= t.idle_cpu),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::scale;

    #[test]
    fn the_median_is_the_middle_value_or_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![1.3, 1.0, 1.1]), 1.1);
        assert_eq!(median(vec![1.4, 1.0, 1.2, 1.1]), 1.15);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn pairs_are_the_scale_and_the_repeats_of_its_count() {
        let first = scale(1000, 100, 120, 50 * 1024);
        let repeats = [
            scale(1000, 100, 105, 50 * 1024),
            scale(300, 30, 90, 30 * 1024),
            scale(1000, 100, 108, 50 * 1024),
        ];
        let pairs = of(&first, &repeats);
        assert_eq!(pairs.len(), 3, "the 300-fleet run is not a pair of 1,000");
        assert!(
            (converge(&pairs) - 1.08).abs() < 1e-9,
            "{}",
            converge(&pairs)
        );
    }
}
