//! The scale targets the report judges against (from the scale issues): one set at 1,000
//! fleets for the default report, one at 10,000 for a count measured alone.

use std::time::Duration;

/// The targets of one report; the absolute ones are judged at [`Targets::fleets`] only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Targets {
    /// The fleet count the absolute targets are set for.
    pub fleets: usize,
    /// Most time for every fleet to be Ready, as a ratio to the floor's.
    pub converge: f64,
    /// Largest status lag (at every count).
    pub lag: Duration,
    /// Most idle API requests per minute.
    pub idle_requests: f64,
    /// Most resident memory, MiB.
    pub rss_mib: f64,
    /// Most API requests per fleet until settled beyond the floor's, when there is a target:
    /// the floor sends the least a correct operator must (it reads each child's name before
    /// applying it, since an operator that never adopts must), so the target is what the
    /// operator may send on top of that.
    pub requests_over_floor: Option<f64>,
    /// Most CPU seconds per idle minute.
    pub idle_cpu: f64,
}

/// The targets of the default report, at 1,000 fleets.
pub const AT_1000: Targets = Targets {
    fleets: 1000,
    converge: 1.1,
    lag: Duration::from_secs(5),
    idle_requests: 50.0,
    rss_mib: 64.0,
    requests_over_floor: Some(5.0),
    idle_cpu: 0.5,
};

/// The targets of a fleet count measured alone, at 10,000 fleets.
pub const AT_10000: Targets = Targets {
    fleets: 10_000,
    converge: 1.1,
    lag: Duration::from_secs(5),
    idle_requests: 50.0,
    rss_mib: 256.0,
    requests_over_floor: None,
    idle_cpu: 1.0,
};

/// The resident memory each fleet may add to an operator whose empty memory is
/// `empty_rss_kib`, KiB: what [`AT_1000`]'s memory target leaves over it, shared by its fleets.
pub fn per_fleet_rss_budget_kib(empty_rss_kib: u64) -> f64 {
    (AT_1000.rss_mib * 1024.0 - empty_rss_kib as f64) / AT_1000.fleets as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_per_fleet_budget_is_what_the_target_leaves_over_the_empty_operator() {
        assert_eq!(per_fleet_rss_budget_kib(16 * 1024), 49.152);
        assert_eq!(per_fleet_rss_budget_kib(64 * 1024), 0.0);
    }
}
