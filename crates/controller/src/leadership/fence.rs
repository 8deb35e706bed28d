//! The write fence: a replica writes only while it holds the leader Lease with time to spare.
//!
//! Another replica may take the Lease once `renewTime + leaseDurationSeconds` has passed. The
//! fence closes earlier, at `renewTime + write_window`, half the renew grace before that: a
//! reconcile that wakes after the Lease was lost (a paused process, a slow API server) finds the
//! fence closed and sends nothing, even before the Lease task has noticed the loss. Once lost,
//! the fence never opens again (the process exits and starts over as a standby).

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// A write refused because this replica may no longer hold the leader Lease.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeadershipLost {
    /// The Lease was not seen renewed in time: another replica may take it soon.
    #[error(
        "refusing to write: the leader Lease was not seen renewed in time, so another replica may take it over"
    )]
    RenewalOverdue,
    /// Another replica holds the Lease, or this one gave it up.
    #[error("refusing to write: this replica no longer holds the leader Lease")]
    Lost,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No leader election: every write may go.
    Unfenced,
    /// Writes may go until this time (never, while it is in the past).
    Until(SystemTime),
    /// The Lease is gone for good.
    Lost,
}

/// The leadership token every write checks immediately before it is sent.
#[derive(Debug)]
pub struct Fence {
    state: Mutex<State>,
}

/// How long after a renewal (the Lease's `renewTime`) this replica may still write, for a Lease
/// of `duration_seconds` renewed `grace_seconds` before it expires: the duration minus half the
/// grace. Strictly less than the duration, and later than the next planned renewal.
pub fn write_window(duration_seconds: u64, grace_seconds: u64) -> Duration {
    Duration::from_secs(duration_seconds).saturating_sub(Duration::from_secs(grace_seconds) / 2)
}

/// The renew grace the operator gives its Lease manager: a third of the duration, at least 1 s.
pub fn renew_grace(duration_seconds: u64) -> u64 {
    duration_seconds.div_ceil(3).max(1)
}

impl Fence {
    /// A fence that never closes: the operator runs without leader election.
    pub fn unfenced() -> Self {
        Self::with(State::Unfenced)
    }

    /// A fence that stays closed until the Lease is seen renewed by this replica.
    pub fn closed() -> Self {
        Self::with(State::Until(SystemTime::UNIX_EPOCH))
    }

    fn with(state: State) -> Self {
        Self {
            state: Mutex::new(state),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that the Lease was seen held by this replica, renewed at `renew_time`: writes may
    /// go until `renew_time + window`. Never moves the deadline back, never reopens a lost fence.
    pub fn renewed(&self, renew_time: SystemTime, window: Duration) {
        let mut state = self.state();
        if let State::Until(until) = *state {
            let new = renew_time.checked_add(window).unwrap_or(until);
            *state = State::Until(until.max(new));
        }
    }

    /// Closes the fence for good: the Lease is held by another replica or was given up.
    pub fn lose(&self) {
        let mut state = self.state();
        if *state != State::Unfenced {
            *state = State::Lost;
        }
    }

    /// Whether a write may be sent at `now`.
    pub fn check_at(&self, now: SystemTime) -> Result<(), LeadershipLost> {
        match *self.state() {
            State::Unfenced => Ok(()),
            State::Until(until) if now < until => Ok(()),
            State::Until(_) => Err(LeadershipLost::RenewalOverdue),
            State::Lost => Err(LeadershipLost::Lost),
        }
    }

    /// Whether a write may be sent now.
    pub fn check(&self) -> Result<(), LeadershipLost> {
        self.check_at(SystemTime::now())
    }

    /// Whether the fence closed for good.
    pub fn is_lost(&self) -> bool {
        *self.state() == State::Lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000) + Duration::from_secs_f64(secs)
    }

    #[test]
    fn the_window_ends_after_the_next_renewal_and_before_expiry() {
        for duration in [2, 3, 15, 60] {
            let grace = renew_grace(duration);
            let window = write_window(duration, grace);
            let renews_at = Duration::from_secs(duration - grace);
            assert!(
                window > renews_at,
                "{duration}: {window:?} vs {renews_at:?}"
            );
            assert!(window < Duration::from_secs(duration), "{duration}");
        }
        assert_eq!(write_window(15, 5), Duration::from_millis(12_500));
    }

    #[test]
    fn a_new_leader_writes_only_once_its_renewal_is_seen() {
        let fence = Fence::closed();
        assert_eq!(fence.check_at(at(0.0)), Err(LeadershipLost::RenewalOverdue));
        fence.renewed(at(0.0), write_window(15, 5));
        assert_eq!(fence.check_at(at(0.1)), Ok(()));
        assert_eq!(fence.check_at(at(12.4)), Ok(()));
    }

    #[test]
    fn writes_stop_when_the_renewal_is_overdue_before_the_lease_expires() {
        let fence = Fence::closed();
        fence.renewed(at(0.0), write_window(15, 5));
        // The renewal planned at 10 s never shows up (a paused process, an unreachable API).
        assert_eq!(
            fence.check_at(at(12.5)),
            Err(LeadershipLost::RenewalOverdue)
        );
        assert!(fence.check_at(at(15.0)).is_err(), "never at expiry");
        // A renewal seen later opens it again: the Lease was still ours.
        fence.renewed(at(10.0), write_window(15, 5));
        assert_eq!(fence.check_at(at(12.5)), Ok(()));
        assert!(fence.check_at(at(22.5)).is_err());
    }

    #[test]
    fn an_older_renewal_never_moves_the_deadline_back() {
        let fence = Fence::closed();
        fence.renewed(at(10.0), write_window(15, 5));
        fence.renewed(at(0.0), write_window(15, 5));
        assert_eq!(fence.check_at(at(20.0)), Ok(()));
    }

    #[test]
    fn a_lost_lease_closes_the_fence_for_good() {
        let fence = Fence::closed();
        fence.renewed(at(0.0), write_window(15, 5));
        fence.lose();
        assert_eq!(fence.check_at(at(1.0)), Err(LeadershipLost::Lost));
        fence.renewed(at(1.0), write_window(15, 5));
        assert_eq!(fence.check_at(at(2.0)), Err(LeadershipLost::Lost));
        assert!(fence.is_lost());
    }

    #[test]
    fn without_leader_election_every_write_goes() {
        let fence = Fence::unfenced();
        assert_eq!(fence.check_at(at(1e6)), Ok(()));
        fence.lose();
        assert_eq!(fence.check_at(at(1e6)), Ok(()));
    }
}
