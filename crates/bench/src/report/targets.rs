//! The scale targets the report judges against (from the scale issue).

use std::time::Duration;

/// The fleet count the absolute targets are set for.
pub const TARGET_FLEETS: usize = 1000;
/// Largest status lag.
pub const LAG_TARGET: Duration = Duration::from_secs(5);
/// Most idle requests per minute at [`TARGET_FLEETS`].
pub const IDLE_REQUESTS_TARGET: f64 = 50.0;
/// Most resident memory at [`TARGET_FLEETS`], MiB.
pub const RSS_TARGET_MIB: f64 = 64.0;
/// Most time for every StatefulSet to be ready at [`TARGET_FLEETS`], as a ratio to the floor.
pub const CONVERGE_TARGET: f64 = 1.3;
/// Most API requests per fleet until settled at [`TARGET_FLEETS`].
pub const REQUESTS_PER_FLEET_TARGET: f64 = 12.0;
/// Most CPU seconds per idle minute at [`TARGET_FLEETS`].
pub const IDLE_CPU_TARGET: f64 = 0.5;

/// The resident memory each fleet may add to an operator whose empty memory is
/// `empty_rss_kib`, KiB: what [`RSS_TARGET_MIB`] leaves over it, shared by [`TARGET_FLEETS`].
pub fn per_fleet_rss_budget_kib(empty_rss_kib: u64) -> f64 {
    (RSS_TARGET_MIB * 1024.0 - empty_rss_kib as f64) / TARGET_FLEETS as f64
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
