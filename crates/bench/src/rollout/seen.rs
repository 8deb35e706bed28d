//! What a rollout run saw, read into each wave's times ([`Seen::wave`]) and the stand-in's own
//! time per pod ([`player_times`]).

use super::player::Play;
use super::watch::RolloutSeen;
use super::workload::BAKE;
use crate::audit::Percentiles;
use crate::measure::clock::Anchor;
use crate::measure::readiness;
use crate::results::rollout::{PlayerTimes, Round, WaveRun};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What the run saw that each wave's times are read from.
pub(super) struct Seen<'a> {
    /// The rollout's statuses.
    pub(super) rollout: &'a RolloutSeen,
    /// The player's plays of the fleets' deploy pods.
    pub(super) plays: &'a [Play],
    /// When each fleet was first seen serving the new version.
    pub(super) served: &'a readiness::Seen,
    /// When the operator's creates of each fleet's deploy Jobs were received, by fleet.
    pub(super) jobs: &'a HashMap<&'a str, Vec<jiff::Timestamp>>,
    /// The rollout's apply.
    pub(super) anchor: &'a Anchor,
}

impl Seen<'_> {
    /// Wave `number`, its times from its first `Publishing`, with its floor's `rounds`.
    pub(super) fn wave(&self, number: usize, rounds: Vec<Round>) -> WaveRun {
        let wave = i32::try_from(number).unwrap_or(i32::MAX);
        let names = self.rollout.wave_fleets(wave);
        let start = self.rollout.wave(wave, "Publishing");
        let ours: Vec<&Play> = self
            .plays
            .iter()
            .filter(|p| p.fleet.as_ref().is_some_and(|f| names.contains(f)))
            .collect();
        let from_start = |t: Option<Instant>| Some(t?.saturating_duration_since(start?));
        let all_played = ours.len() >= names.len();
        let when = |f: fn(&Play) -> Option<Instant>| -> Option<Instant> {
            all_played.then(|| last(ours.iter().map(|p| f(p))))?
        };
        let jobs: Vec<jiff::Timestamp> = names
            .iter()
            .filter_map(|n| self.jobs.get(n.as_str()))
            .flatten()
            .copied()
            .collect();
        let from_start_wall = |t: Option<&jiff::Timestamp>| {
            let start = self.anchor.wall(start?);
            Duration::try_from(t?.duration_since(start)).ok()
        };
        WaveRun {
            number: wave,
            fleets: names.len(),
            bake: BAKE,
            started: start.map(|s| s.saturating_duration_since(self.anchor.instant())),
            first_job: from_start_wall(jobs.iter().min()),
            jobs_created: from_start_wall(jobs.iter().max()),
            pods_seen: from_start(when(|p| Some(p.seen))),
            played: from_start(when(|p| p.played)),
            pods_succeeded: from_start(when(|p| p.succeeded)),
            serving: from_start(last(
                names.iter().map(|n| self.served.ready.get(n).copied()),
            )),
            baking: from_start(self.rollout.wave(wave, "Baking")),
            passed: from_start(self.rollout.wave(wave, "Passed")),
            floor_rounds: rounds,
        }
    }
}

/// The latest of `times`, once every one of them happened.
fn last(times: impl Iterator<Item = Option<Instant>>) -> Option<Instant> {
    times.collect::<Option<Vec<_>>>()?.into_iter().max()
}

/// The player's own time per pod over `plays`.
pub(super) fn player_times(plays: &[Play]) -> PlayerTimes {
    let times: Vec<Duration> = plays
        .iter()
        .filter_map(|p| Some(p.played?.saturating_duration_since(p.seen)))
        .collect();
    let pointer: Vec<Duration> = plays
        .iter()
        .filter_map(|p| Some(p.written?.saturating_duration_since(p.seen)))
        .collect();
    PlayerTimes {
        pods: times.len() as u64,
        max: times.iter().max().copied().unwrap_or_default(),
        spread: Percentiles::of(times),
        pointer: Percentiles::of(pointer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_player_s_time_is_from_seeing_a_pod_to_having_played_it() {
        let t = Instant::now();
        let play = |fleet: &str, played_ms: Option<u64>| Play {
            fleet: Some(fleet.into()),
            seen: t,
            written: played_ms.map(|m| t + Duration::from_millis(m / 2)),
            played: played_ms.map(|m| t + Duration::from_millis(m)),
            succeeded: None,
        };
        let plays = [play("a", Some(10)), play("b", Some(30)), play("c", None)];
        let times = player_times(&plays);
        assert_eq!(times.pods, 2);
        assert_eq!(times.max, Duration::from_millis(30));
        assert_eq!(times.pointer.p99, Duration::from_millis(15));
    }
}
