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

/// The converge ratio of some pairs, judged by the report's own rule: no operator can do less
/// than its floor, so a pair below 1.00× had a floor that was not the limit (slow: too few fake
/// nodes, or the machine busy while it ran). Such a pair is left out of the median and named.
#[derive(Debug, Clone, PartialEq)]
pub struct Converge {
    /// The median over the pairs that count; NaN when none does.
    pub median: f64,
    /// The ratios of the pairs that count, in the order they ran.
    pub counted: Vec<f64>,
    /// The pairs left out, each as (its number, from 1; its ratio).
    pub excluded: Vec<(usize, f64)>,
}

impl Converge {
    /// The lowest and highest ratio that counts (infinite when none does).
    pub fn spread(&self) -> (f64, f64) {
        self.counted
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
                (lo.min(r), hi.max(r))
            })
    }

    /// The pairs left out, as the report names them ("pair 2 excluded: ratio 0.97× < 1.00×, the
    /// floor was slow"); `None` when every pair counts.
    pub fn excluded_note(&self) -> Option<String> {
        if self.excluded.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .excluded
            .iter()
            .map(|&(pair, r)| format!("pair {pair} excluded: ratio {} < 1.00×", below_one(r)))
            .collect();
        let were = if self.excluded.len() == 1 {
            "the floor was slow"
        } else {
            "their floors were slow"
        };
        Some(format!("{}, {were}", each.join(", ")))
    }
}

/// A ratio below 1 as the report writes it, with a third decimal where two would round it up to
/// 1.00×.
fn below_one(r: f64) -> String {
    if r >= 0.995 {
        format!("{r:.3}×")
    } else {
        times(r)
    }
}

/// The converge ratio over `pairs`: the median of those at or above 1.00×, the others left out.
pub fn converge(pairs: &[&Scale]) -> Converge {
    let mut counted = Vec::new();
    let mut excluded = Vec::new();
    for (i, s) in pairs.iter().enumerate() {
        let r = s.converge_ratio();
        if r < 1.0 {
            excluded.push((i + 1, r));
        } else {
            counted.push(r);
        }
    }
    Converge {
        median: median(counted.clone()),
        counted,
        excluded,
    }
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
    let c = converge(&pairs);
    let _ = writeln!(
        out,
        "\n### {} fleets, pair by pair\n\nThe floor and the operator of {} fleets ran {} times, \
alternately, each on a fresh control plane on the same fake nodes; the first pair is the table's \
column. Converge and idle CPU at this count are judged on the median of the pairs; a pair whose \
converge ratio is below 1.00× is left out of the converge median (its floor was slower than the \
operator, so it was not the limit), not of the idle CPU's (the operator's own).\n",
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
            ratio_cell(s.converge_ratio()),
            s.operator.to_settle.requests as f64 / n,
            s.floor.requests.requests as f64 / n,
            s.operator.to_settle.server_errors,
            s.operator.idle_cpu_seconds_per_minute(),
            mib(s.operator.settled_rss_kib),
        );
    }
    let cpu = idle_cpu(&pairs);
    let cpu_line = format!(
        "median CPU per idle minute {cpu:.2} s (target ≤ {} s){}.",
        t.idle_cpu,
        verdict(cpu <= t.idle_cpu)
    );
    if c.counted.is_empty() {
        let _ = writeln!(
            out,
            "\nNo converge ratio to judge: {}; measure again. The {cpu_line}",
            c.excluded_note().unwrap_or_default()
        );
        return;
    }
    let (low, high) = c.spread();
    let over = match c.excluded_note() {
        Some(note) => format!("{} of {} pairs, {note}; ", c.counted.len(), pairs.len()),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "\nMedian converge ratio **{}** ({over}spread {}–{}; target ≤ {:.1}×){}; {cpu_line}",
        times(c.median),
        times(low),
        times(high),
        t.converge,
        verdict(c.median <= t.converge),
    );
}

/// A pair's converge ratio in its row, marked when it is left out of the median.
fn ratio_cell(r: f64) -> String {
    if r < 1.0 {
        format!(
            "{} (excluded: below 1.00×, the floor was slow)",
            below_one(r)
        )
    } else {
        times(r)
    }
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
        let c = converge(&pairs);
        assert!((c.median - 1.08).abs() < 1e-9, "{c:?}");
        assert!(c.excluded.is_empty(), "{c:?}");
    }

    #[test]
    fn a_pair_below_1_is_left_out_of_the_median_and_named() {
        let first = scale(1000, 100, 130, 50 * 1024);
        let repeats = [
            scale(1000, 100, 97, 50 * 1024),
            scale(1000, 100, 110, 50 * 1024),
        ];
        let c = converge(&of(&first, &repeats));
        // With the 0.97 pair, the median would be 1.10.
        assert!((c.median - 1.2).abs() < 1e-9, "{c:?}");
        assert_eq!(c.counted.len(), 2, "{c:?}");
        assert_eq!(c.excluded.len(), 1, "{c:?}");
        assert_eq!(c.excluded[0].0, 2, "{c:?}");
        assert_eq!(
            c.excluded_note().as_deref(),
            Some("pair 2 excluded: ratio 0.97× < 1.00×, the floor was slow")
        );
        assert_eq!(
            (times(c.spread().0), times(c.spread().1)),
            ("1.10×".into(), "1.30×".into())
        );
    }

    #[test]
    fn a_ratio_just_below_1_is_not_written_as_1() {
        let c = converge(&[&scale(1000, 1000, 998, 50 * 1024)]);
        assert!(c.median.is_nan(), "{c:?}");
        assert_eq!(
            c.excluded_note().as_deref(),
            Some("pair 1 excluded: ratio 0.998× < 1.00×, the floor was slow")
        );
    }
}
