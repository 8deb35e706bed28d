//! What the runs measured, as plain values the report and the plot are made from.

mod calibration;
mod floor;
mod previews;
mod rate;
mod ratio;
pub mod rollout;
mod skipped;

pub use calibration::{Calibration, Nodes};
pub use floor::FloorRun;
pub use previews::PreviewsRun;
pub use skipped::Skipped;

use crate::audit::{ByResource, ServerLoad, Tally};
use crate::measure::cpu_meter::CpuUse;
use crate::measure::events::EventCounts;
use crate::measure::status_lag::StatusLag;
use rate::{per_minute, seconds_per_minute};
pub use ratio::ratio;
use std::time::Duration;

/// The operator on one fleet count.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorRun {
    /// Fleets created.
    pub fleets: usize,
    /// The fake nodes of its control plane.
    pub nodes: usize,
    /// From the first create until every StatefulSet was ready.
    pub statefulsets_ready: Duration,
    /// From the first create until every fleet reported Ready=True.
    pub fleets_ready: Duration,
    /// Over the fleets without spec.source, the delay from its StatefulSet being ready to its
    /// Ready=True.
    pub status_lag: StatusLag,
    /// The fleets whose public Service was created before their StatefulSet (the operator does
    /// so while the API server is slow to create Services).
    pub services_first: u64,
    /// From the first create until the operator settled (every fleet Ready, no more writes).
    pub settled: Duration,
    /// Whether its writes stopped; false when the wait for them to stop ran out.
    pub writes_stopped: bool,
    /// The operator's requests from the first create until it settled.
    pub to_settle: Tally,
    /// The same by resource and verb, reads and writes.
    pub by_resource: ByResource,
    /// The Events it published on the fleets until it settled.
    pub events: EventCounts,
    /// What the API server handled from the first create until every fleet was Ready, from
    /// everyone.
    pub server: ServerLoad,
    /// Everyone's writes over the same time (the control plane's too), by resource and verb.
    pub server_writes: ByResource,
    /// Where the CPU went over the same time.
    pub cpu: CpuUse,
    /// kwok's stage plays the API server refused from the first create until every fleet was
    /// Ready.
    pub kwok_refused: u64,
    /// The control plane's own resident memory once the operator settled.
    pub control_plane: ControlPlaneMemory,
    /// The operator's requests during the idle window after it settled.
    pub idle: Tally,
    /// The idle window.
    pub idle_window: Duration,
    /// Node `GET /state` requests the operator sent during the idle window (capacity reads),
    /// as the nodes' double answered them; 0 when the nodes cannot be read.
    pub idle_state_reads: u64,
    /// Fleets whose status first showed their capacity during the idle window: each one status
    /// write, the fleet's first reading of its nodes, due once the fleet is 5 minutes old and
    /// its nodes' turn comes at --capacity-reads-per-second (a once-only transition, not idle
    /// churn).
    pub idle_first_capacity: u64,
    /// The first round of capacity reads, waited for before the idle window when that window
    /// would have overlapped it; `None` when the window ended before any fleet was 5 minutes
    /// old.
    pub capacity_round: Option<CapacityRound>,
    /// CPU time (user + system) the operator used during the idle window.
    pub idle_cpu: Duration,
    /// Resident memory with no fleet, once started, KiB.
    pub empty_rss_kib: u64,
    /// Resident memory once settled, KiB.
    pub settled_rss_kib: u64,
}

impl OperatorRun {
    /// Requests per minute of the idle window.
    pub fn idle_requests_per_minute(&self) -> f64 {
        per_minute(self.idle.requests, self.idle_window)
    }

    /// Node `GET /state` requests per minute of the idle window.
    pub fn idle_state_reads_per_minute(&self) -> f64 {
        per_minute(self.idle_state_reads, self.idle_window)
    }

    /// Writes per minute of the idle window.
    pub fn idle_writes_per_minute(&self) -> f64 {
        per_minute(self.idle.writes, self.idle_window)
    }

    /// Writes in the idle window beyond the fleets that first showed their capacity in it.
    pub fn idle_other_writes(&self) -> u64 {
        self.idle.writes.saturating_sub(self.idle_first_capacity)
    }

    /// CPU seconds per minute of the idle window.
    pub fn idle_cpu_seconds_per_minute(&self) -> f64 {
        seconds_per_minute(self.idle_cpu, self.idle_window)
    }

    /// Resident memory added per fleet over the empty operator, KiB.
    pub fn rss_growth_per_fleet_kib(&self) -> f64 {
        self.settled_rss_kib.saturating_sub(self.empty_rss_kib) as f64 / self.fleets.max(1) as f64
    }

    /// Its status patches (`celldfleets/status`) until it settled, per fleet.
    pub fn status_patches_per_fleet(&self) -> f64 {
        per_fleet(status_patches(&self.by_resource), self.fleets)
    }

    /// Its Warning Events on fleets until it settled, per fleet.
    pub fn warnings_per_fleet(&self) -> f64 {
        per_fleet(self.events.warnings(), self.fleets)
    }
}

impl FloorRun {
    /// Its status patches (`celldfleets/status`) until every fleet was Ready, per fleet.
    pub fn status_patches_per_fleet(&self) -> f64 {
        per_fleet(status_patches(&self.by_resource), self.fleets)
    }
}

/// The status patches (`patch` of `celldfleets/status`) among `requests`.
pub fn status_patches(requests: &ByResource) -> u64 {
    requests
        .get(&("celldfleets/status".to_string(), "patch".to_string()))
        .copied()
        .unwrap_or(0)
}

/// `n` per fleet of `fleets`.
fn per_fleet(n: u64, fleets: usize) -> f64 {
    n as f64 / fleets.max(1) as f64
}

/// The first round of capacity reads, as the bench waited for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapacityRound {
    /// Fleets whose status showed their capacity when the wait ended.
    pub shown: u64,
    /// From the first create until the last of them first showed it.
    pub took: Duration,
    /// From the first create until the operator wrote nothing for a while after that.
    pub settled: Duration,
}

/// The resident memory (`VmRSS`) of the control plane's two largest processes, KiB (0 when it
/// could not be read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ControlPlaneMemory {
    /// kube-apiserver's.
    pub apiserver_kib: u64,
    /// etcd's.
    pub etcd_kib: u64,
}

/// One fleet count: its floor and the operator, each on a fresh control plane.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    /// The floor.
    pub floor: FloorRun,
    /// The operator.
    pub operator: OperatorRun,
}

impl Scale {
    /// The fleet count.
    pub fn fleets(&self) -> usize {
        self.operator.fleets
    }

    /// The operator's time to ready StatefulSets over the floor's.
    pub fn statefulsets_ratio(&self) -> f64 {
        ratio(
            self.operator.statefulsets_ready,
            self.floor.statefulsets_ready,
        )
    }

    /// The converge ratio: the operator's time to Ready fleets over the floor's. Below 1 the
    /// floor is wrong: no operator can do less than it.
    pub fn converge_ratio(&self) -> f64 {
        ratio(self.operator.fleets_ready, self.floor.fleets_ready)
    }
}

/// Fleets created and deleted again and again under one operator.
#[derive(Debug, Clone, PartialEq)]
pub struct ChurnRun {
    /// Fleets per cycle.
    pub fleets: usize,
    /// Each cycle's two halves.
    pub cycles: Vec<Cycle>,
    /// Resident memory with no fleet, once started, KiB.
    pub empty_rss_kib: u64,
    /// Its file-backed part (the binary's code paged in so far), KiB.
    pub empty_file_kib: u64,
    /// Resident memory [`CHURN_REST`](crate::settings::CHURN_REST) after one fleet came and
    /// went, before the cycles: the warm empty operator, KiB.
    pub warm_rss_kib: u64,
    /// Its file-backed part, KiB.
    pub warm_file_kib: u64,
    /// Resident memory as each cycle's last fleet was gone, KiB: whether it grows cycle after
    /// cycle.
    pub cycle_rss_kib: Vec<u64>,
    /// Resident memory [`CHURN_REST`](crate::settings::CHURN_REST) after the last cycle, KiB.
    pub after_rss_kib: u64,
    /// Resident memory [`CHURN_SETTLE`](crate::settings::CHURN_SETTLE) after the last cycle,
    /// KiB: what the target judges.
    pub settled_rss_kib: u64,
    /// Its file-backed part, KiB.
    pub settled_file_kib: u64,
    /// The operator's established TCP connections at [`CHURN_SETTLE`](crate::settings::CHURN_SETTLE).
    pub connections: Connections,
    /// The operator's requests over the whole churn.
    pub requests: Tally,
}

/// One churn cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycle {
    /// From the first create until every fleet is Ready.
    pub to_ready: Duration,
    /// From the deletion until no fleet and no StatefulSet is left.
    pub to_gone: Duration,
}

impl Cycle {
    /// The whole cycle.
    pub fn total(&self) -> Duration {
        self.to_ready + self.to_gone
    }
}

impl ChurnRun {
    /// Resident memory settled after the churn over the empty operator's.
    pub fn rss_ratio(&self) -> f64 {
        self.settled_rss_kib as f64 / self.empty_rss_kib.max(1) as f64
    }

    /// Resident memory settled after the churn over the warm empty operator's.
    pub fn warm_rss_ratio(&self) -> f64 {
        self.settled_rss_kib as f64 / self.warm_rss_kib.max(1) as f64
    }

    /// Resident memory right after the churn over the empty operator's.
    pub fn early_rss_ratio(&self) -> f64 {
        self.after_rss_kib as f64 / self.empty_rss_kib.max(1) as f64
    }
}

/// A process's established TCP connections, by what they reach.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Connections {
    /// To the API server.
    pub api_server: usize,
    /// To the S3 server.
    pub s3: usize,
    /// To anything else.
    pub other: usize,
}

impl Connections {
    /// Sorts remote ports into the API server's, the S3 server's and others.
    pub fn classify(remote_ports: &[u16], api_server: u16, s3: u16) -> Self {
        let mut c = Connections::default();
        for &port in remote_ports {
            match port {
                p if p == api_server => c.api_server += 1,
                p if p == s3 => c.s3 += 1,
                _ => c.other += 1,
            }
        }
        c
    }

    /// All of them.
    pub fn total(&self) -> usize {
        self.api_server + self.s3 + self.other
    }
}

/// The plugin's start-up against the floor's.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginStart {
    /// Median wall time of `kubectl-celld --version`.
    pub plugin: Duration,
    /// Median wall time of `true`.
    pub floor: Duration,
}

/// Everything the report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// The day of the run (`YYYY-MM-DD`).
    pub date: String,
    /// The bench's arguments as given (the program's name left out).
    pub invocation: Vec<String>,
    /// CPU cores of the machine.
    pub cores: usize,
    /// Wall time of the whole run.
    pub total: Duration,
    /// The fleet count measured alone (`--single`), if so: its own report, judged against the
    /// targets at 10,000 fleets.
    pub single: Option<usize>,
    /// How many fake nodes the fleet counts ran on, and why; `None` when none ran.
    pub nodes: Option<Nodes>,
    /// One entry per fleet count measured, in increasing order.
    pub scales: Vec<Scale>,
    /// The largest count's further pairs of floor and operator, in the order they ran (the
    /// first pair is its entry in `scales`).
    pub repeats: Vec<Scale>,
    /// The largest count's floor and operator with nodes that cannot be read (every node
    /// `GET /state` fails), when measured: beside its entry in `scales`, whose nodes answer.
    pub unreachable: Option<Scale>,
    /// The churn run, when it was measured.
    pub churn: Option<ChurnRun>,
    /// The previews run, when it was measured.
    pub previews: Option<PreviewsRun>,
    /// The rollout run, when it was measured.
    pub rollout: Option<rollout::RolloutRun>,
    /// The rollout's fleets when it was measured alone (`--rollout`): its own report.
    pub rollout_alone: Option<usize>,
    /// The plugin's start-up, when it was measured.
    pub plugin: Option<PluginStart>,
    /// What could not be measured.
    pub skipped: Vec<Skipped>,
    /// How long each run took, control plane start and stop included.
    pub steps: Vec<Step>,
    /// The machine's 1-minute load average at the start and at the end.
    pub load: (f64, f64),
}

/// One run and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Which run.
    pub what: String,
    /// Its wall time.
    pub took: Duration,
}

impl Step {
    /// A run that started at `started` and has just ended.
    pub fn new(what: String, started: std::time::Instant) -> Self {
        Step {
            what,
            took: started.elapsed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_sorted_by_remote_port() {
        let c = Connections::classify(&[6443, 9000, 6443, 80], 6443, 9000);
        assert_eq!(
            c,
            Connections {
                api_server: 2,
                s3: 1,
                other: 1
            }
        );
        assert_eq!(c.total(), 4);
    }
}
