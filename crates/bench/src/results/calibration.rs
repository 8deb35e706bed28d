//! How many fake nodes the fleet counts ran on: given, or found by timing the floor on more and
//! more of them.

use super::floor::FloorRun;
use super::skipped::Skipped;
use crate::calibration_rule::fastest;
use std::time::Duration;

/// The fake nodes of every floor and operator run of the fleet counts.
#[derive(Debug, Clone, PartialEq)]
pub enum Nodes {
    /// Given on the command line (`--nodes`).
    Given(usize),
    /// Chosen by the calibration.
    Calibrated(Calibration),
}

impl Nodes {
    /// How many.
    pub fn count(&self) -> usize {
        match self {
            Nodes::Given(n) => *n,
            Nodes::Calibrated(c) => c.nodes(),
        }
    }
}

/// The floor of the largest fleet count timed on more and more fake nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The fleet count it ran at.
    pub fleets: usize,
    /// The fake nodes it started from: the fewest the pods fit on.
    pub start: usize,
    /// Its floor runs, in the order run (the nodes doubling).
    pub runs: Vec<FloorRun>,
    /// A run that could not be measured, which ended the calibration.
    pub failed: Option<Skipped>,
}

impl Calibration {
    /// (nodes, the floor's converge time) of each run.
    pub fn times(&self) -> Vec<(usize, Duration)> {
        self.runs
            .iter()
            .map(|r| (r.nodes, r.fleets_ready))
            .collect()
    }

    /// The fastest run: the floor of its fleet count.
    pub fn chosen(&self) -> Option<&FloorRun> {
        fastest(&self.times()).and_then(|i| self.runs.get(i))
    }

    /// The fake nodes chosen: the fastest run's, else the start.
    pub fn nodes(&self) -> usize {
        self.chosen().map_or(self.start, |r| r.nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::floor;

    #[test]
    fn the_fastest_floor_sets_the_nodes() {
        let mut c = Calibration {
            fleets: 1000,
            start: 3,
            runs: vec![floor(1000, 3, 120), floor(1000, 6, 70), floor(1000, 12, 68)],
            failed: None,
        };
        assert_eq!(c.nodes(), 12);
        assert_eq!(c.chosen().map(|r| r.nodes), Some(12));
        assert_eq!(Nodes::Calibrated(c.clone()).count(), 12);
        c.runs.clear();
        assert_eq!(c.nodes(), 3, "no run: the start");
        assert_eq!(Nodes::Given(40).count(), 40);
    }
}
