//! When the calibration of the fake nodes stops, and what it chooses: the floor is timed on
//! more and more kwok nodes, doubled each time, until a run is less than
//! [`CALIBRATION_GAIN`] faster than the one before (or the cap is reached); the fastest run
//! wins.

use crate::settings::{CALIBRATION_GAIN, MAX_NODES};
use std::time::Duration;

/// The most fake nodes the calibration tries when it starts from `start` (the fewest the pods
/// fit on): [`MAX_NODES`], or `start` when the pods need more.
pub fn cap(start: usize) -> usize {
    MAX_NODES.max(start)
}

/// The fake nodes to try next after `runs` (nodes, floor time, in the order run), starting
/// from `start`; `None` when the calibration is done.
pub fn next_nodes(start: usize, runs: &[(usize, Duration)]) -> Option<usize> {
    let cap = cap(start);
    let Some(&(last_nodes, last_time)) = runs.last() else {
        return Some(start.max(1));
    };
    if last_nodes >= cap {
        return None;
    }
    if let [.., (_, previous), _] = runs
        && !faster_enough(*previous, last_time)
    {
        return None;
    }
    Some((last_nodes * 2).min(cap))
}

/// Whether `now` is at least [`CALIBRATION_GAIN`] faster than `before`.
pub fn faster_enough(before: Duration, now: Duration) -> bool {
    now.as_secs_f64() <= before.as_secs_f64() * (1.0 - CALIBRATION_GAIN)
}

/// The index of the fastest of `runs` (the fewer nodes on a tie); `None` when there is none.
pub fn fastest(runs: &[(usize, Duration)]) -> Option<usize> {
    runs.iter()
        .enumerate()
        .min_by_key(|(_, (nodes, time))| (*time, *nodes))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: u64) -> Duration {
        Duration::from_secs(v)
    }

    #[test]
    fn nodes_double_from_the_start_while_the_floor_gets_5_percent_faster() {
        assert_eq!(next_nodes(3, &[]), Some(3));
        assert_eq!(next_nodes(3, &[(3, s(120))]), Some(6));
        assert_eq!(next_nodes(3, &[(3, s(120)), (6, s(70))]), Some(12));
        // 4 % faster: not enough.
        assert_eq!(next_nodes(3, &[(3, s(120)), (6, s(70)), (12, s(67))]), None);
        // Slower: done.
        assert_eq!(next_nodes(3, &[(3, s(120)), (6, s(130))]), None);
        // Exactly 5 % faster is enough.
        assert_eq!(next_nodes(3, &[(3, s(100)), (6, s(95))]), Some(12));
    }

    #[test]
    fn the_cap_ends_the_doubling() {
        let runs = [(24, s(100)), (48, s(50))];
        assert_eq!(next_nodes(24, &runs), Some(MAX_NODES));
        assert_eq!(
            next_nodes(24, &[(24, s(100)), (48, s(50)), (64, s(40))]),
            None
        );
        // Pods that need more nodes than the cap get them, once.
        assert_eq!(cap(100), 100);
        assert_eq!(next_nodes(100, &[]), Some(100));
        assert_eq!(next_nodes(100, &[(100, s(10))]), None);
        assert_eq!(next_nodes(0, &[]), Some(1));
    }

    #[test]
    fn the_fastest_run_is_chosen_the_fewer_nodes_on_a_tie() {
        assert_eq!(fastest(&[]), None);
        assert_eq!(fastest(&[(3, s(120)), (6, s(70)), (12, s(67))]), Some(2));
        assert_eq!(fastest(&[(3, s(120)), (6, s(70)), (12, s(75))]), Some(1));
        assert_eq!(fastest(&[(6, s(70)), (12, s(70))]), Some(0));
    }
}
