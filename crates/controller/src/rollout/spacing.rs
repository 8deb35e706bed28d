//! How often a rollout's status is written while only its fleets' progress moves: at most once
//! every [`SPACING`]. A change that lasts is written at once: a phase of the rollout or of a
//! wave, a fleet starting (its `from` is what a rollback points back at), failing, rolling back
//! or leaving, a gate's result, a condition's status or reason. A fleet of a wave under way
//! turning Adopted, its adopted count and its message, and the counts they move, are judged
//! again from the fleets' own statuses at every look, so they wait for the next write. A wave
//! of a hundred fleets then costs a handful of writes of the status, which lists every fleet,
//! not one per fleet.

use celld_api::CelldRolloutStatus;
use celld_api::rollout::FleetPhase;
use std::time::Duration;

/// The least time between two writes of a rollout's status that only its fleets' progress
/// tells apart.
pub const SPACING: Duration = Duration::from_secs(2);

/// How long to hold `next` back, `since_write` after the last write of `previous` (None: not
/// known, as after a restart): None when it is to be written now.
pub fn hold(
    previous: Option<&CelldRolloutStatus>,
    next: &CelldRolloutStatus,
    since_write: Option<Duration>,
) -> Option<Duration> {
    let (previous, since) = (previous?, since_write?);
    (since < SPACING && lasting(previous) == lasting(next)).then(|| SPACING - since)
}

/// `status` without what only the fleets' progress moves.
fn lasting(status: &CelldRolloutStatus) -> CelldRolloutStatus {
    let mut s = status.clone();
    s.moved = None;
    for c in &mut s.conditions {
        c.message.clear();
    }
    for fleet in s.waves.iter_mut().flat_map(|w| w.fleets.iter_mut()) {
        if fleet.phase == FleetPhase::Adopted {
            fleet.phase = FleetPhase::Publishing;
        }
        if fleet.phase == FleetPhase::Publishing {
            fleet.to = None;
            fleet.adopted = None;
            fleet.message = None;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::rollout::{RolloutFleet, WavePhase, WaveStatus};

    fn status(wave: WavePhase, fleets: &[(&str, FleetPhase)]) -> CelldRolloutStatus {
        CelldRolloutStatus {
            waves: vec![WaveStatus {
                number: 1,
                phase: wave,
                fleets: fleets
                    .iter()
                    .map(|(name, phase)| RolloutFleet {
                        name: (*name).into(),
                        phase: *phase,
                        from: Some("v1".into()),
                        adopted: (*phase == FleetPhase::Adopted).then(|| "2/2".into()),
                        ..RolloutFleet::default()
                    })
                    .collect(),
                ..WaveStatus::default()
            }],
            ..CelldRolloutStatus::default()
        }
    }

    const SOON: Option<Duration> = Some(Duration::from_millis(500));

    #[test]
    fn a_fleet_adopting_waits_for_the_spacing_and_a_lasting_change_does_not() {
        use FleetPhase::*;
        let publishing = status(
            WavePhase::Publishing,
            &[("a", Publishing), ("b", Publishing)],
        );
        let one_adopted = status(WavePhase::Publishing, &[("a", Adopted), ("b", Publishing)]);
        assert_eq!(
            hold(Some(&publishing), &one_adopted, SOON),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(hold(Some(&publishing), &one_adopted, Some(SPACING)), None);
        assert_eq!(hold(Some(&publishing), &one_adopted, None), None, "unknown");
        assert_eq!(hold(None, &one_adopted, SOON), None, "the first");
        let baking = status(WavePhase::Baking, &[("a", Adopted), ("b", Adopted)]);
        assert_eq!(
            hold(Some(&one_adopted), &baking, SOON),
            None,
            "a wave's phase"
        );
        let failed = status(WavePhase::Publishing, &[("a", Adopted), ("b", Failed)]);
        assert_eq!(hold(Some(&one_adopted), &failed, SOON), None, "a failure");
        let pending = status(WavePhase::Publishing, &[("a", Publishing), ("b", Pending)]);
        assert_eq!(
            hold(Some(&pending), &publishing, SOON),
            None,
            "a fleet starting"
        );
    }
}
