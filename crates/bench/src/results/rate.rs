//! Counts and times over a window, per minute.

use std::time::Duration;

/// `count` per minute of `window`, 0 for an empty window.
pub fn per_minute(count: u64, window: Duration) -> f64 {
    let minutes = window.as_secs_f64() / 60.0;
    if minutes > 0.0 {
        count as f64 / minutes
    } else {
        0.0
    }
}

/// Seconds of `time` per minute of `window`, 0 for an empty window.
pub fn seconds_per_minute(time: Duration, window: Duration) -> f64 {
    let minutes = window.as_secs_f64() / 60.0;
    if minutes > 0.0 {
        time.as_secs_f64() / minutes
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_per_minute_of_the_window() {
        assert_eq!(per_minute(30, Duration::from_secs(30)), 60.0);
        assert_eq!(per_minute(30, Duration::ZERO), 0.0);
        assert_eq!(
            seconds_per_minute(Duration::from_millis(500), Duration::from_secs(120)),
            0.25
        );
    }
}
