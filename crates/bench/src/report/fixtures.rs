//! The results the report's tests render (the plot's, the calibration's and the pairs' tests
//! use them too).

use crate::audit::{Percentiles, ServerLoad, Tally};
use crate::measure::cpu_meter::CpuUse;
use crate::measure::events::EventCounts;
use crate::measure::status_lag::{Split, StatusLag};
use crate::results::{
    Calibration, ChurnRun, Connections, ControlPlaneMemory, Cycle, FloorRun, Nodes, OperatorRun,
    Results, Scale, Skipped, Step,
};
use std::time::Duration;

/// What the API server handled: `requests` over `window_s` seconds, latencies in ms.
pub(crate) fn load(requests: u64, window_s: u64, p50_ms: u64) -> ServerLoad {
    let ms = Duration::from_millis;
    ServerLoad {
        requests,
        window: Duration::from_secs(window_s),
        all: Percentiles {
            count: requests - 10,
            p50: ms(p50_ms),
            p90: ms(p50_ms * 4),
            p99: ms(p50_ms * 20),
        },
        writes: Percentiles {
            count: requests / 4,
            p50: ms(p50_ms * 2),
            p90: ms(p50_ms * 8),
            p99: ms(p50_ms * 40),
        },
        cluster_ips: Percentiles {
            count: requests / 40,
            p50: ms(p50_ms / 2),
            p90: ms(p50_ms),
            p99: ms(p50_ms * 3),
        },
    }
}

/// A status lag of these percentiles and largest, in ms, and `worst`'s split.
pub(crate) fn status_lag(p50_ms: u64, p99_ms: u64, max_ms: u64, worst: Option<Split>) -> StatusLag {
    let ms = Duration::from_millis;
    StatusLag {
        spread: Percentiles {
            count: 98,
            p50: ms(p50_ms),
            p90: ms(p99_ms / 2),
            p99: ms(p99_ms),
        },
        max: ms(max_ms),
        to_write: Percentiles {
            count: 98,
            p50: ms(p50_ms / 2),
            p90: ms(p99_ms / 4),
            p99: ms(p99_ms / 2),
        },
        in_server: Percentiles {
            count: 98,
            p50: ms(p50_ms / 4),
            p90: ms(p99_ms / 4),
            p99: ms(p99_ms / 4),
        },
        worst,
    }
}

/// A floor of `fleets` fleets on `nodes` fake nodes, every fleet Ready after `secs`.
pub(crate) fn floor(fleets: usize, nodes: usize, secs: u64) -> FloorRun {
    let n = fleets as u64;
    FloorRun {
        fleets,
        nodes,
        objects: fleets * 6,
        statefulsets_ready: Duration::from_secs(secs),
        fleets_ready: Duration::from_secs(secs),
        status_lag: status_lag(100, 250, 300, None),
        requests: Tally {
            requests: n * 7,
            writes: n * 7,
            server_errors: 0,
        },
        by_resource: [
            (("celldfleets/status".into(), "patch".into()), n),
            (("statefulsets".into(), "patch".into()), n),
        ]
        .into_iter()
        .collect(),
        server: load(n * 40, secs, 2),
        server_writes: [(("endpoints".into(), "update".into()), n / 4)]
            .into_iter()
            .collect(),
        cpu: cpu_use(secs, 0.95, &[("kube-apiserver", 50_000), ("bench", 7_000)]),
        kwok_refused: 0,
    }
}

/// CPU over `secs` seconds on 2 cores, `busy` of them busy, and `processes`' CPU in ms.
pub(crate) fn cpu_use(secs: u64, busy: f64, processes: &[(&str, u64)]) -> CpuUse {
    CpuUse {
        window: Duration::from_secs(secs),
        cores: 2,
        machine_busy: Some(busy),
        processes: processes
            .iter()
            .map(|(n, ms)| ((*n).to_string(), Duration::from_millis(*ms)))
            .collect(),
    }
}

pub(crate) fn scale(fleets: usize, floor_s: u64, ready_s: u64, rss_kib: u64) -> Scale {
    Scale {
        floor: floor(fleets, 6, floor_s),
        operator: OperatorRun {
            fleets,
            nodes: 6,
            statefulsets_ready: Duration::from_secs(ready_s - 1),
            fleets_ready: Duration::from_secs(ready_s),
            status_lag: status_lag(
                400,
                2_100,
                6_500,
                Some(Split {
                    fleet: "f123".into(),
                    to_write: Duration::from_millis(2_900),
                    in_server: Duration::from_millis(3_400),
                    to_watch: Duration::from_millis(200),
                }),
            ),
            services_first: fleets as u64 / 2,
            settled: Duration::from_secs(ready_s + 2),
            writes_stopped: true,
            to_settle: Tally {
                requests: 12_345,
                writes: 1_100,
                server_errors: 0,
            },
            by_resource: [
                (
                    ("celldfleets/status".into(), "patch".into()),
                    fleets as u64 * 3,
                ),
                (("statefulsets".into(), "patch".into()), fleets as u64),
                (("secrets".into(), "get".into()), fleets as u64 / 2),
            ]
            .into_iter()
            .collect(),
            events: EventCounts::default(),
            server: load(fleets as u64 * 50, ready_s, 3),
            server_writes: [(("endpoints".into(), "update".into()), fleets as u64 * 2)]
                .into_iter()
                .collect(),
            cpu: cpu_use(
                ready_s,
                0.9,
                &[("kube-apiserver", 40_000), ("operator", 12_300)],
            ),
            kwok_refused: fleets as u64 / 5,
            control_plane: ControlPlaneMemory {
                apiserver_kib: 900 * 1024,
                etcd_kib: 200 * 1024,
            },
            idle: Tally {
                requests: 40,
                writes: 0,
                server_errors: 0,
            },
            idle_window: Duration::from_secs(60),
            idle_state_reads: 1_200,
            idle_first_capacity: 0,
            capacity_round: None,
            idle_cpu: Duration::from_millis(1_500),
            empty_rss_kib: 16 * 1024,
            settled_rss_kib: rss_kib,
        },
    }
}

/// The calibration at 1,000 fleets: 3, 6 and 12 nodes, 6 the fastest.
pub(crate) fn calibration() -> Calibration {
    Calibration {
        fleets: 1000,
        start: 3,
        runs: vec![floor(1000, 3, 120), floor(1000, 6, 50), floor(1000, 12, 52)],
        failed: None,
    }
}

pub(crate) fn results() -> Results {
    Results {
        date: "2026-01-01".into(),
        invocation: vec!["100".into(), "1000".into()],
        cores: 2,
        total: Duration::from_secs(754),
        single: None,
        nodes: Some(Nodes::Calibrated(calibration())),
        scales: vec![
            scale(100, 10, 20, 32 * 1024),
            scale(1000, 50, 150, 80 * 1024),
        ],
        repeats: Vec::new(),
        unreachable: None,
        churn: Some(ChurnRun {
            fleets: 300,
            cycles: vec![
                Cycle {
                    to_ready: Duration::from_secs(20),
                    to_gone: Duration::from_secs(10),
                },
                Cycle {
                    to_ready: Duration::from_secs(19),
                    to_gone: Duration::from_secs(12),
                },
            ],
            empty_rss_kib: 16 * 1024,
            empty_file_kib: 10 * 1024,
            warm_rss_kib: 17 * 1024,
            warm_file_kib: 11 * 1024,
            cycle_rss_kib: vec![25 * 1024, 25 * 1024 + 512],
            after_rss_kib: 24 * 1024,
            settled_rss_kib: 18 * 1024,
            settled_file_kib: 11 * 1024,
            connections: Connections {
                api_server: 2,
                s3: 1,
                other: 0,
            },
            requests: Tally {
                requests: 9_000,
                writes: 4_000,
                server_errors: 2,
            },
        }),
        previews: Some(super::previews::tests::run()),
        rollout: Some(crate::results::rollout::tests::run()),
        rollout_alone: None,
        plugin: Some(crate::results::PluginStart {
            plugin: Duration::from_micros(4_200),
            floor: Duration::from_micros(900),
        }),
        skipped: vec![Skipped {
            what: "3,000 fleets".into(),
            why: "not asked".into(),
        }],
        steps: vec![Step {
            what: "floor, 100 fleets".into(),
            took: Duration::from_secs(61),
        }],
        load: (2.5, 3.3),
    }
}
