//! What the rollout run measured: a CelldRollout over many fleets on two stores, wave by wave
//! against its floor (each wave's publish round trip and its bake), its requests, and the
//! operator at rest once it finished.

use super::rate::{per_minute, seconds_per_minute};
use super::ratio::ratio;
use crate::audit::{ByResource, Percentiles, ServerLoad, Tally};
use crate::measure::cpu_meter::CpuUse;
use std::collections::BTreeMap;
use std::time::Duration;

/// One round of the floor: a wave's publishes with nothing but the control plane acting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// Jobs created at once.
    pub jobs: usize,
    /// From the first create until every Job was seen `Complete`.
    pub complete: Duration,
    /// From the first create until every pod was seen Succeeded.
    pub pods_succeeded: Duration,
    /// From the first create until the player had played every pod.
    pub played: Duration,
}

/// One wave, as the bench's watches saw it; each time is from the moment the wave was first
/// seen `Publishing` (None when it was never seen so).
#[derive(Debug, Clone, PartialEq)]
pub struct WaveRun {
    /// Its number, from 1.
    pub number: i32,
    /// Its fleets.
    pub fleets: usize,
    /// Its bake (spec.waves[*].bake).
    pub bake: Duration,
    /// From the rollout's apply until the wave was first seen `Publishing`.
    pub started: Option<Duration>,
    /// Until the operator's first create of a deploy Job of its fleets was received (the audit
    /// log).
    pub first_job: Option<Duration>,
    /// Until the last of them was.
    pub jobs_created: Option<Duration>,
    /// Until the last of its deploy pods was seen (the operator created its Job, the Job
    /// controller the pod).
    pub pods_seen: Option<Duration>,
    /// Until the player had played the last of them (pointer written, pod annotated to end).
    pub played: Option<Duration>,
    /// Until the last of them was seen Succeeded.
    pub pods_succeeded: Option<Duration>,
    /// Until the last of its fleets' statuses said it serves the new version (Adopted, Ready).
    pub serving: Option<Duration>,
    /// Until the wave was first seen `Baking`.
    pub baking: Option<Duration>,
    /// Until the wave was first seen `Passed`: the wave's time.
    pub passed: Option<Duration>,
    /// The floor's rounds of this wave's size, in the order they ran.
    pub floor_rounds: Vec<Round>,
}

impl WaveRun {
    /// Its publish round trip: the fastest of the floor's rounds of its size (none without
    /// fleets).
    pub fn round_trip(&self) -> Duration {
        self.floor_rounds
            .iter()
            .map(|r| r.complete)
            .min()
            .unwrap_or_default()
    }

    /// The bake it must sit through: its bake, none without fleets (the operator bakes no
    /// wave that moved none).
    pub fn floor_bake(&self) -> Duration {
        if self.fleets == 0 {
            Duration::ZERO
        } else {
            self.bake
        }
    }

    /// Its floor: its publish round trip and its bake.
    pub fn floor(&self) -> Duration {
        self.round_trip() + self.floor_bake()
    }

    /// Its time over its floor (NaN when unknown).
    pub fn ratio(&self) -> f64 {
        self.passed
            .map_or(f64::NAN, |passed| ratio(passed, self.floor()))
    }

    /// How long it baked, as the watch saw it: from `Baking` to `Passed`.
    pub fn baked(&self) -> Option<Duration> {
        Some(self.passed?.saturating_sub(self.baking?))
    }
}

/// The control plane over one window of the run: where the CPU went, what the API server
/// handled, everyone's writes, and the stage plays of kwok's it refused.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlaneWindow {
    /// Where the CPU went.
    pub cpu: CpuUse,
    /// What the API server handled, from everyone.
    pub server: ServerLoad,
    /// Everyone's writes, by resource and verb.
    pub writes: ByResource,
    /// kwok's stage plays the API server refused.
    pub kwok_refused: u64,
}

/// The player's own time for each deploy pod of the rollout: from seeing it until its pointer
/// was written and the pod annotated to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlayerTimes {
    /// Pods played.
    pub pods: u64,
    /// Percentiles of its time per pod.
    pub spread: Percentiles,
    /// The longest.
    pub max: Duration,
    /// Percentiles of the part until the pointer was written (the S3 server's).
    pub pointer: Percentiles,
}

/// A rollout over many fleets under one operator, from its apply until it succeeded and the
/// operator settled, then an idle window.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutRun {
    /// Fleets it moved.
    pub fleets: usize,
    /// The CelldObjectStores they are spread over.
    pub stores: usize,
    /// The fake nodes of its control plane.
    pub nodes: usize,
    /// From the first create of the fleets until all were Ready (before the rollout).
    pub fleets_ready: Duration,
    /// Its waves, in order.
    pub waves: Vec<WaveRun>,
    /// From the apply until the rollout was first seen `Succeeded`.
    pub succeeded: Duration,
    /// From the apply until the operator settled (no write for a while after that).
    pub settled: Duration,
    /// Whether its writes stopped; false when the wait for them to stop ran out.
    pub writes_stopped: bool,
    /// The operator's requests from the apply until it settled.
    pub to_settle: Tally,
    /// The same by resource and verb.
    pub by_resource: ByResource,
    /// From the apply until the first wave was first seen `Publishing`.
    pub first_wave: Option<Duration>,
    /// The control plane over the floor's rounds before the rollout.
    pub floor_plane: PlaneWindow,
    /// The control plane from the apply until the rollout succeeded.
    pub rollout_plane: PlaneWindow,
    /// The operator's Events while it ran, by `"<kind> <type> <reason>"`.
    pub events: BTreeMap<String, u64>,
    /// The rollout's statuses the bench's watch saw (each a status write).
    pub statuses: u64,
    /// Their size as JSON, summed, bytes.
    pub status_bytes: u64,
    /// The largest of them, bytes.
    pub largest_status: u64,
    /// The rollout's reconciles while it progressed (the operator's log says each).
    pub rollout_reconciles: u64,
    /// Fleet reconciles from the apply until it settled (the operator's metrics), when read.
    pub fleet_reconciles: Option<u64>,
    /// The operator's CPU time from the apply until it settled.
    pub cpu: Duration,
    /// Fleets whose status first showed their nodes' capacity between the apply and the end
    /// of the idle window (a once-only write at 5 minutes of age, not the rollout's).
    pub capacity_first_shown: u64,
    /// The player's own time per pod.
    pub player: PlayerTimes,
    /// The operator's requests in the idle window after it settled.
    pub idle: Tally,
    /// The same by resource and verb.
    pub idle_by_resource: ByResource,
    /// The idle window.
    pub idle_window: Duration,
    /// Node `GET /state` requests in the idle window.
    pub idle_state_reads: u64,
    /// CPU time the operator used in the idle window.
    pub idle_cpu: Duration,
    /// Resident memory with no fleet, KiB.
    pub empty_rss_kib: u64,
    /// Resident memory once the fleets settled, before the rollout, KiB.
    pub before_rss_kib: u64,
    /// Resident memory once the rollout settled, KiB.
    pub settled_rss_kib: u64,
}

impl RolloutRun {
    /// The floor of the whole rollout: every wave's.
    pub fn floor(&self) -> Duration {
        self.waves.iter().map(WaveRun::floor).sum()
    }

    /// The bakes alone.
    pub fn bakes(&self) -> Duration {
        self.waves.iter().map(WaveRun::floor_bake).sum()
    }

    /// From the apply until it succeeded, over its floor.
    pub fn ratio(&self) -> f64 {
        ratio(self.succeeded, self.floor())
    }

    /// The fewest requests any operator sends for the rollout: a deploy Job and a status
    /// saying it serves the new version for each fleet, and the rollout's own statuses (a wave
    /// starting, then baking, the next starting as one passes, and the last passing).
    pub fn request_floor(&self) -> u64 {
        let waves = self.waves.len() as u64;
        2 * self.fleets as u64 + 2 * waves + 1
    }

    /// Requests until settled per fleet.
    pub fn requests_per_fleet(&self) -> f64 {
        self.to_settle.requests as f64 / self.fleets.max(1) as f64
    }

    /// The request floor per fleet.
    pub fn request_floor_per_fleet(&self) -> f64 {
        self.request_floor() as f64 / self.fleets.max(1) as f64
    }

    /// Requests per minute of the idle window.
    pub fn idle_requests_per_minute(&self) -> f64 {
        per_minute(self.idle.requests, self.idle_window)
    }

    /// Writes per minute of the idle window.
    pub fn idle_writes_per_minute(&self) -> f64 {
        per_minute(self.idle.writes, self.idle_window)
    }

    /// CPU seconds per minute of the idle window.
    pub fn idle_cpu_seconds_per_minute(&self) -> f64 {
        seconds_per_minute(self.idle_cpu, self.idle_window)
    }

    /// Node `GET /state` requests per minute of the idle window.
    pub fn idle_state_reads_per_minute(&self) -> f64 {
        per_minute(self.idle_state_reads, self.idle_window)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn round(jobs: usize, complete_ms: u64) -> Round {
        Round {
            jobs,
            complete: Duration::from_millis(complete_ms),
            pods_succeeded: Duration::from_millis(complete_ms / 2),
            played: Duration::from_millis(complete_ms / 4),
        }
    }

    /// Wave `number` of `fleets` fleets that passed after `passed_ms`, its floor rounds
    /// `rounds_ms`.
    pub(crate) fn wave(number: i32, fleets: usize, passed_ms: u64, rounds_ms: &[u64]) -> WaveRun {
        let ms = |m: u64| Some(Duration::from_millis(m));
        WaveRun {
            number,
            fleets,
            bake: Duration::from_secs(5),
            started: ms(100),
            first_job: ms(150),
            jobs_created: ms(250),
            pods_seen: ms(300),
            played: ms(350),
            pods_succeeded: ms(900),
            serving: ms(1_500),
            baking: ms(1_600),
            passed: ms(passed_ms),
            floor_rounds: rounds_ms.iter().map(|&m| round(fleets, m)).collect(),
        }
    }

    pub(crate) fn run() -> RolloutRun {
        RolloutRun {
            fleets: 200,
            stores: 2,
            nodes: 1,
            fleets_ready: Duration::from_secs(20),
            waves: vec![
                wave(1, 1, 7_100, &[1_200, 1_000]),
                wave(2, 19, 8_000, &[1_500, 1_700]),
                wave(3, 80, 9_000, &[2_500, 2_400]),
                wave(4, 100, 9_600, &[3_000, 2_900]),
            ],
            succeeded: Duration::from_millis(34_000),
            settled: Duration::from_secs(44),
            writes_stopped: true,
            to_settle: Tally {
                requests: 1_000,
                writes: 900,
                server_errors: 0,
            },
            by_resource: ByResource::from([
                (("jobs".to_string(), "create".to_string()), 200),
                (("celldfleets/status".to_string(), "patch".to_string()), 400),
                (
                    ("celldrollouts/status".to_string(), "patch".to_string()),
                    300,
                ),
            ]),
            first_wave: Some(Duration::from_millis(400)),
            floor_plane: PlaneWindow {
                cpu: CpuUse {
                    window: Duration::from_secs(14),
                    cores: 2,
                    machine_busy: Some(0.8),
                    processes: vec![("kube-apiserver".into(), Duration::from_secs(9))],
                },
                server: crate::report::fixtures::load(4_000, 14, 30),
                writes: ByResource::from([(("pods".to_string(), "create".to_string()), 200)]),
                kwok_refused: 0,
            },
            rollout_plane: PlaneWindow {
                cpu: CpuUse {
                    window: Duration::from_secs(34),
                    cores: 2,
                    machine_busy: Some(1.0),
                    processes: vec![
                        ("kube-apiserver".into(), Duration::from_secs(40)),
                        ("operator".into(), Duration::from_secs(8)),
                    ],
                },
                server: crate::report::fixtures::load(9_000, 34, 60),
                writes: ByResource::from([(("pods".to_string(), "create".to_string()), 200)]),
                kwok_refused: 3,
            },
            events: BTreeMap::from([
                ("CelldFleet Normal Published".to_string(), 200),
                ("CelldRollout Normal WavePassed".to_string(), 4),
            ]),
            statuses: 300,
            status_bytes: 15_000_000,
            largest_status: 60_000,
            rollout_reconciles: 420,
            fleet_reconciles: Some(800),
            cpu: Duration::from_millis(3_500),
            capacity_first_shown: 0,
            player: PlayerTimes {
                pods: 200,
                spread: Percentiles {
                    count: 200,
                    p50: Duration::from_millis(12),
                    p90: Duration::from_millis(30),
                    p99: Duration::from_millis(60),
                },
                max: Duration::from_millis(80),
                pointer: Percentiles {
                    count: 200,
                    p50: Duration::from_millis(5),
                    p90: Duration::from_millis(9),
                    p99: Duration::from_millis(20),
                },
            },
            idle: Tally {
                requests: 45,
                writes: 0,
                server_errors: 0,
            },
            idle_by_resource: ByResource::from([(
                ("celldfleets".to_string(), "watch".to_string()),
                2,
            )]),
            idle_window: Duration::from_secs(60),
            idle_state_reads: 400,
            idle_cpu: Duration::from_millis(120),
            empty_rss_kib: 16 * 1024,
            before_rss_kib: 24 * 1024,
            settled_rss_kib: 30 * 1024,
        }
    }

    #[test]
    fn a_wave_s_floor_is_its_fastest_round_trip_and_its_bake() {
        let w = wave(3, 80, 9_000, &[2_500, 2_400]);
        assert_eq!(w.round_trip(), Duration::from_millis(2_400));
        assert_eq!(w.floor(), Duration::from_millis(7_400));
        assert_eq!(w.baked(), Some(Duration::from_millis(7_400)));
        assert!((w.ratio() - 9.0 / 7.4).abs() < 1e-9);
        let empty = wave(2, 0, 50, &[]);
        assert_eq!(
            empty.floor(),
            Duration::ZERO,
            "an empty wave neither publishes nor bakes"
        );
        assert!(empty.ratio().is_nan());
    }

    #[test]
    fn the_rollout_s_floor_is_the_sum_of_its_waves() {
        let r = run();
        assert_eq!(
            r.floor(),
            Duration::from_millis(20_000 + 1_000 + 1_500 + 2_400 + 2_900)
        );
        assert_eq!(r.bakes(), Duration::from_secs(20));
        assert!((r.ratio() - 34.0 / 27.8).abs() < 1e-9);
        assert_eq!(r.request_floor(), 409);
        assert_eq!(r.requests_per_fleet(), 5.0);
        assert_eq!(r.idle_requests_per_minute(), 45.0);
        assert_eq!(r.idle_cpu_seconds_per_minute(), 0.12);
    }
}
