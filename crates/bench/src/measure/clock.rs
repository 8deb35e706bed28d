//! Ties the monotonic clock the bench times with to the wall clock of the audit log.

use jiff::{SignedDuration, Timestamp};
use std::time::Instant;

/// An instant and the wall-clock time read together.
#[derive(Debug, Clone, Copy)]
pub struct Anchor {
    instant: Instant,
    wall: Timestamp,
}

impl Anchor {
    /// Now.
    pub fn now() -> Self {
        Anchor {
            instant: Instant::now(),
            wall: Timestamp::now(),
        }
    }

    /// The monotonic instant.
    pub fn instant(&self) -> Instant {
        self.instant
    }

    /// The wall-clock time of `at`, judged from this anchor.
    pub fn wall(&self, at: Instant) -> Timestamp {
        let offset = if at >= self.instant {
            SignedDuration::try_from(at - self.instant)
        } else {
            SignedDuration::try_from(self.instant - at).map(|d| -d)
        };
        offset
            .ok()
            .and_then(|d| self.wall.checked_add(d).ok())
            .unwrap_or(self.wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn instants_map_to_wall_times_on_both_sides() {
        let anchor = Anchor::now();
        let later = anchor.instant() + Duration::from_millis(1_500);
        assert_eq!(
            anchor.wall(later).duration_since(anchor.wall),
            SignedDuration::from_millis(1_500)
        );
        if let Some(earlier) = anchor.instant().checked_sub(Duration::from_secs(2)) {
            assert_eq!(
                anchor.wall(earlier).duration_since(anchor.wall),
                SignedDuration::from_secs(-2)
            );
        }
    }
}
