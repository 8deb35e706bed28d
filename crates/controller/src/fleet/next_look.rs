//! What a full reconcile decides about the fleet's next look, from what it read, did and
//! published: whether the fleet settled (its next periodic reconcile may stop after the
//! pointer), and how long until the next reconcile. Pure.

use k8s_openapi::jiff::Timestamp;
use std::time::Duration;

/// How often a fleet is looked at while its nodes move to a new image or a new Worker version:
/// restores, versions served and pods that finished terminating change nothing the operator
/// watches.
pub const UPGRADE_POLL: Duration = Duration::from_secs(5);

/// What the next look is decided from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The reconcile met no failure and applied or pruned nothing.
    pub quiet: bool,
    /// The status was written.
    pub wrote: bool,
    /// A change of celld image is under way.
    pub upgrading: bool,
    /// Some nodes still switch to the deployed Worker version.
    pub adopting: bool,
    /// A deploy Job of spec.source runs, or one is to start.
    pub publishing: bool,
    /// When a retry of spec.source's publish is due.
    pub source_wake: Option<Timestamp>,
    /// When spec.autoscaling's decision may change with no new reading.
    pub scale_wake: Option<Timestamp>,
    /// When the rollout the status shows under way passes its deadline.
    pub deadline: Option<Timestamp>,
    /// The periodic look's period for the fleet's pointer, stretched for the fleets' number.
    pub resync: Duration,
}

/// The next look at a fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// Whether the fleet settled: nothing moves that the next periodic reconcile would not
    /// see in its inputs.
    pub settled: bool,
    /// When to reconcile again.
    pub after: Duration,
}

/// The next look, as of `now`. A fleet settles only when nothing is under way: a rollout or an
/// adoption is looked at again every [`UPGRADE_POLL`], and a retry, a scaling window or a
/// deadline due before the periodic look is looked at when it is due (a second after).
pub fn next_look(f: &Facts, now: Timestamp) -> Look {
    let settled = f.quiet
        && !f.wrote
        && !f.upgrading
        && !f.adopting
        && !f.publishing
        && f.scale_wake.is_none()
        && f.deadline.is_none();
    let periodic = if f.upgrading || f.adopting {
        UPGRADE_POLL
    } else {
        f.resync
    };
    let after = [f.source_wake, f.scale_wake, f.deadline]
        .into_iter()
        .flatten()
        .map(|at| until(now, at))
        .fold(periodic, Duration::min);
    Look { settled, after }
}

/// The time from `now` until `at` and a second more (so the moment has passed then), at least
/// a second.
pub fn until(now: Timestamp, at: Timestamp) -> Duration {
    now.duration_until(at).try_into().unwrap_or(Duration::ZERO) + Duration::from_secs(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESYNC: Duration = Duration::from_secs(60);

    fn at_rest() -> Facts {
        Facts {
            quiet: true,
            wrote: false,
            upgrading: false,
            adopting: false,
            publishing: false,
            source_wake: None,
            scale_wake: None,
            deadline: None,
            resync: RESYNC,
        }
    }

    fn in_secs(now: Timestamp, s: i64) -> Option<Timestamp> {
        Some(now + k8s_openapi::jiff::SignedDuration::from_secs(s))
    }

    #[test]
    fn a_fleet_at_rest_settles_until_its_resync() {
        let now = Timestamp::UNIX_EPOCH;
        assert_eq!(
            next_look(&at_rest(), now),
            Look {
                settled: true,
                after: RESYNC
            }
        );
    }

    #[test]
    fn anything_under_way_keeps_it_from_settling() {
        let now = Timestamp::UNIX_EPOCH;
        let cases = [
            Facts {
                quiet: false,
                ..at_rest()
            },
            Facts {
                wrote: true,
                ..at_rest()
            },
            Facts {
                publishing: true,
                ..at_rest()
            },
            Facts {
                scale_wake: in_secs(now, 600),
                ..at_rest()
            },
            Facts {
                deadline: in_secs(now, 600),
                ..at_rest()
            },
        ];
        for facts in cases {
            let look = next_look(&facts, now);
            assert!(!look.settled, "{facts:?}");
            assert_eq!(look.after, RESYNC, "{facts:?}");
        }
    }

    #[test]
    fn a_rollout_or_an_adoption_is_polled() {
        let now = Timestamp::UNIX_EPOCH;
        for facts in [
            Facts {
                upgrading: true,
                ..at_rest()
            },
            Facts {
                adopting: true,
                ..at_rest()
            },
        ] {
            assert_eq!(
                next_look(&facts, now),
                Look {
                    settled: false,
                    after: UPGRADE_POLL
                }
            );
        }
    }

    #[test]
    fn the_soonest_wake_before_the_periodic_look_wins() {
        let now = Timestamp::UNIX_EPOCH;
        let facts = Facts {
            source_wake: in_secs(now, 30),
            scale_wake: in_secs(now, 20),
            deadline: in_secs(now, 40),
            ..at_rest()
        };
        assert_eq!(next_look(&facts, now).after, Duration::from_secs(21));
        let past = Facts {
            deadline: in_secs(now, -5),
            ..at_rest()
        };
        assert_eq!(
            next_look(&past, now).after,
            Duration::from_secs(1),
            "a deadline already passed is looked at in a second"
        );
    }
}
