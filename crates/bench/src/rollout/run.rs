//! The rollout run: on a fresh control plane with the operator, its fleets created and Ready
//! and the operator settled; the floor's rounds (one per wave, its size); then the rollout,
//! applied and timed until it succeeded and the operator settled; the idle window; and the
//! floor's rounds once more (a wave's floor is the faster of its two rounds).

use super::floor::{Floor, Sources};
use super::player::{Play, Player};
use super::seen::{Seen, player_times};
use super::watch::{RolloutSeen, RolloutWatch, serves_revision};
use super::workload::{
    BAKE, RolloutWorkload, STORES, rollout_manifest, rollout_namespace, served_before, wave_sizes,
};
use crate::error::{Error, Result};
use crate::measure::clock::Anchor;
use crate::measure::cpu_meter::{CpuMeter, CpuUse};
use crate::measure::proc_stats::{clock_tick, cpu_ticks, rss_kib};
use crate::measure::readiness::{Shared, Watches, fleet_shows_capacity, lock, watch};
use crate::node_answers::NodeAnswers;
use crate::operator::run::{AUDIT_LAG, Plan, Setup, first_capacity_round, settle};
use crate::results::rollout::Round;
use crate::results::rollout::{PlaneWindow, RolloutRun, WaveRun};
use crate::settings::{
    FIRST_CAPACITY_AGE, IDLE_WINDOW, nodes_for, pods_of, ready_timeout, settle_limit,
};
use celld_api::CelldFleet;
use celld_api::rollout::RolloutPhase;
use kube::{Api, ResourceExt};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// The operator's log line for each rollout reconcile while the rollout progresses (at debug).
const STEPPED: &str = "rollout stepped";

/// The `RUST_LOG` directive that makes the operator log [`STEPPED`].
const LOG: &str = "celld_operator::rollout::reconcile=debug";

/// The operator's counter of fleet reconciles, in its metrics.
const RECONCILES: &str = "celld_operator_reconciles_total";

/// A watch's task, stopped when dropped.
struct Task(JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What the control plane of a rollout over `fleets` fleets is prepared for: room for their
/// pods and one deploy pod each, no bench fleet published, every node serving the version
/// before the rollout, the deploy pods played by the run, the rollout's reconciles logged.
fn plan(fleets: usize) -> Plan {
    Plan {
        nodes: nodes_for(pods_of(fleets) + fleets),
        published: 0,
        serves: served_before,
        server_load: true,
        answers: NodeAnswers::Answering,
        deploy_pods: false,
        log: Some(LOG),
    }
}

/// Measures a rollout over `fleets` fleets on a fresh control plane.
pub async fn run(bin: &Path, fleets: usize) -> Result<RolloutRun> {
    let plan = plan(fleets);
    let mut setup = Setup::start(bin, &format!("rollout-{fleets}"), plan).await?;
    match measure(&mut setup, fleets, plan.nodes).await {
        Ok(run) => {
            setup.remove().await?;
            Ok(run)
        }
        Err(e) => Err(setup
            .gave_out(format!("the rollout over {fleets} fleets"), e)
            .await),
    }
}

/// What the run holds while it measures.
struct Stage<'a> {
    setup: &'a mut Setup,
    player: Player,
    floor: Floor,
    /// The fleets, in the rollout's order (by name).
    fleets: Vec<CelldFleet>,
    /// Each wave's size.
    sizes: Vec<usize>,
    /// The floor's rounds so far, by wave.
    rounds: Vec<Vec<Round>>,
}

impl Stage<'_> {
    /// One floor round for each wave with fleets, each its size, in order; returns when they
    /// started and ended, and where the CPU went meanwhile.
    async fn floor_rounds(&mut self) -> Result<Window> {
        let cpu = CpuMeter::start(self.setup.busy());
        let started = Instant::now();
        let mut first = 0;
        for (wave, &size) in self.sizes.iter().enumerate() {
            if size == 0 {
                continue;
            }
            let fleets = &self.fleets[first..first + size];
            first += size;
            let number = self.rounds.iter().map(Vec::len).sum::<usize>();
            let operator = &mut self.setup.operator;
            let round = self
                .floor
                .round(&self.player, fleets, number, || {
                    operator.check_alive().map_err(Error::from)
                })
                .await?;
            eprintln!(
                "bench: rollout: floor round {number}: {} deploy Jobs Complete after {:.1} s",
                round.jobs,
                round.complete.as_secs_f64()
            );
            self.rounds[wave].push(round);
        }
        Ok(Window {
            from: started,
            to: Instant::now(),
            cpu: cpu.stop(),
        })
    }
}

/// A time the control plane is looked at over: when it started and ended, and where the CPU
/// went.
struct Window {
    from: Instant,
    to: Instant,
    cpu: CpuUse,
}

impl Window {
    /// The control plane over this window, from `audit` (every user's requests) and kwok's
    /// log.
    fn plane(self, setup: &Setup, anchor: &Anchor) -> PlaneWindow {
        let (from, to) = (anchor.wall(self.from), anchor.wall(self.to));
        let server = setup.audit.server();
        PlaneWindow {
            cpu: self.cpu,
            server: server.map(|s| s.load(from, to)).unwrap_or_default(),
            writes: server
                .map(|s| s.writes_by_resource(from, to))
                .unwrap_or_default(),
            kwok_refused: setup.plane.kwok_refused(from, to),
        }
    }
}

async fn measure(setup: &mut Setup, count: usize, nodes: usize) -> Result<RolloutRun> {
    let client = setup.plane.client();
    let namespace = rollout_namespace();
    let logs = setup.logs();
    let workload = RolloutWorkload::prepare(client.clone(), setup.plane.s3(), count).await?;
    let double = setup.node_double().ok_or_else(|| Error::Process {
        what: "the rollout run".into(),
        detail: "it needs the stand-in for the nodes' API".into(),
    })?;
    let player = Player::start(
        client.clone(),
        workload.fleet_buckets.clone(),
        workload.first.clone(),
        double,
    )?;
    let watches = Watches::start(&client);
    let (served, served_task): (Shared, _) = watch::<CelldFleet>(
        Api::namespaced(client.clone(), &namespace),
        serves_revision,
        fleet_shows_capacity,
    );
    let _served_task = Task(served_task);

    eprintln!("bench: rollout: {count} fleets on {} stores", STORES.len());
    let created = Anchor::now();
    let mut fleets = workload.create_fleets().await?;
    fleets.sort_by_key(ResourceExt::name_any);
    let operator = &mut setup.operator;
    watches
        .wait_ready(count, count, ready_timeout(count), logs.clone(), || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    let all_ready = watches.fleets().last_ready().unwrap_or_else(Instant::now);
    let fleets_ready = all_ready.saturating_duration_since(created.instant());
    eprintln!(
        "bench: rollout: every fleet Ready after {:.1} s; waiting for the operator's writes to stop",
        fleets_ready.as_secs_f64()
    );
    settle(&mut setup.audit, &created, all_ready, settle_limit(count)).await?;
    let before_rss_kib = rss_kib(setup.pid);

    let mut stores = BTreeMap::new();
    for name in STORES {
        stores.insert(name.to_string(), workload.store(name).await?);
    }
    let sources = Sources {
        rollout: rollout_manifest()?,
        stores,
        secret: setup.workload.secret().await?,
    };
    let sizes = wave_sizes(count)?;
    let mut stage = Stage {
        floor: Floor::start(&client, &namespace, sources, logs.clone()),
        player,
        fleets,
        rounds: vec![Vec::new(); sizes.len()],
        sizes,
        setup,
    };
    let floor_window = stage.floor_rounds().await?;

    let rollout = RolloutWatch::start(&client, &namespace);
    let reconciles_before = fleet_reconciles(stage.setup).await;
    let cpu_before = cpu_ticks(stage.setup.pid);
    let anchor = Anchor::now();
    let plane_cpu = CpuMeter::start(stage.setup.busy());
    eprintln!("bench: rollout: applying the rollout");
    workload.apply_rollout().await?;
    let seen = wait_succeeded(&mut stage, &rollout, count).await?;
    let succeeded_at = seen
        .phases
        .get(RolloutPhase::Succeeded.as_str())
        .copied()
        .unwrap_or_else(Instant::now);
    let rollout_window = Window {
        from: anchor.instant(),
        to: succeeded_at,
        cpu: plane_cpu.stop(),
    };
    let since = |t: Instant| t.saturating_duration_since(anchor.instant());
    eprintln!(
        "bench: rollout: Succeeded after {:.1} s; waiting for the operator's writes to stop",
        since(succeeded_at).as_secs_f64()
    );
    let setup = &mut *stage.setup;
    let (settled_at, writes_stopped) =
        settle(&mut setup.audit, &anchor, succeeded_at, settle_limit(count)).await?;
    let cpu = clock_tick()
        * u32::try_from(cpu_ticks(setup.pid).saturating_sub(cpu_before)).unwrap_or(u32::MAX);
    let reconciles_after = fleet_reconciles(setup).await;
    let seen = rollout.seen();
    drop(rollout);
    let events = super::events::count(&client, &namespace, anchor.wall(anchor.instant())).await?;
    if settled_at + IDLE_WINDOW > created.instant() + FIRST_CAPACITY_AGE {
        first_capacity_round(setup, &watches, &created, count).await?;
    }
    let settled_rss_kib = rss_kib(setup.pid);
    eprintln!(
        "bench: rollout: settled; idle for {} s",
        IDLE_WINDOW.as_secs()
    );
    let idle = setup.idle().await?;
    let capacity_first_shown = lock(&served)
        .shown
        .values()
        .filter(|t| **t >= anchor.instant() && **t <= idle.end)
        .count() as u64;
    drop(watches);
    stage.floor_rounds().await?;

    let plays: Vec<Play> = stage
        .player
        .plays()
        .into_iter()
        .filter(|p| p.fleet.is_some())
        .collect();
    let served = lock(&served).clone();
    let rounds = stage.rounds.clone();
    let setup = &mut *stage.setup;
    tokio::time::sleep(AUDIT_LAG).await;
    setup.audit.poll()?;
    let floor_plane = floor_window.plane(setup, &anchor);
    let rollout_plane = rollout_window.plane(setup, &anchor);
    let requests = setup.audit.poll()?;
    let jobs: HashMap<&str, Vec<jiff::Timestamp>> =
        requests
            .created("jobs")
            .fold(HashMap::new(), |mut by_fleet, (job, at)| {
                if let Some((fleet, _)) = job.split_once("-src-") {
                    by_fleet.entry(fleet).or_default().push(at);
                }
                by_fleet
            });
    let seen_by = Seen {
        rollout: &seen,
        plays: &plays,
        served: &served,
        jobs: &jobs,
        anchor: &anchor,
    };
    let waves: Vec<WaveRun> = rounds
        .into_iter()
        .enumerate()
        .map(|(i, rounds)| seen_by.wave(i + 1, rounds))
        .collect();
    let (from, to) = (
        anchor.wall(anchor.instant()),
        anchor.wall(settled_at + Duration::from_millis(1)),
    );
    Ok(RolloutRun {
        fleets: count,
        stores: STORES.len(),
        nodes,
        fleets_ready,
        first_wave: waves.first().and_then(|w| w.started),
        floor_plane,
        rollout_plane,
        waves,
        succeeded: since(succeeded_at),
        settled: since(settled_at),
        writes_stopped,
        to_settle: requests.tally(from, to),
        by_resource: requests.by_resource(from, to),
        events,
        statuses: seen.statuses,
        status_bytes: seen.status_bytes,
        largest_status: seen.largest_status,
        rollout_reconciles: log_lines(&logs.join("operator.log"), STEPPED),
        fleet_reconciles: reconciles_after
            .zip(reconciles_before)
            .map(|(a, b)| a.saturating_sub(b)),
        cpu,
        capacity_first_shown,
        player: player_times(&plays),
        idle: requests.tally(anchor.wall(idle.start), anchor.wall(idle.end)),
        idle_by_resource: requests.by_resource(anchor.wall(idle.start), anchor.wall(idle.end)),
        idle_window: idle.window(),
        idle_state_reads: idle.state_reads,
        idle_cpu: idle.cpu,
        empty_rss_kib: setup.empty_rss_kib,
        before_rss_kib,
        settled_rss_kib,
    })
}

/// Waits until the rollout is seen `Succeeded`; an error when it ends otherwise (a gate
/// failed), when the operator or the player fails, or after a generous time.
async fn wait_succeeded(
    stage: &mut Stage<'_>,
    rollout: &RolloutWatch,
    count: usize,
) -> Result<RolloutSeen> {
    let waves = stage.sizes.len() as u32;
    let timeout =
        Duration::from_secs(120 + count as u64) + (BAKE + Duration::from_secs(60)) * waves;
    let started = Instant::now();
    loop {
        let seen = rollout.seen();
        let phase = seen.last.as_ref().map(|s| s.phase);
        if phase == Some(RolloutPhase::Succeeded) {
            return Ok(seen);
        }
        if let Some(ended) = phase.filter(|p| p.ended()) {
            return Err(Error::Process {
                what: "the rollout".into(),
                detail: format!(
                    "it ended {} instead of Succeeded: {}",
                    ended.as_str(),
                    serde_json::to_string(&seen.last).unwrap_or_default()
                ),
            });
        }
        if started.elapsed() >= timeout {
            return Err(Error::Timeout {
                what: "the rollout to succeed".into(),
                seconds: timeout.as_secs(),
                seen: format!(
                    "phase {:?}, wave {:?}, moved {:?}",
                    phase.map(RolloutPhase::as_str),
                    seen.last.as_ref().and_then(|s| s.wave.clone()),
                    seen.last.as_ref().and_then(|s| s.moved.clone())
                ),
                logs: stage.setup.logs(),
            });
        }
        stage.setup.operator.check_alive()?;
        stage.player.failed()?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The operator's fleet reconciles so far (its metrics), None when they cannot be read.
async fn fleet_reconciles(setup: &Setup) -> Option<u64> {
    let metrics = setup.operator.metrics().await.ok()?;
    counter_sum(&metrics, RECONCILES)
}

/// The sum of the counter `name` over its labels in Prometheus text `metrics`.
fn counter_sum(metrics: &str, name: &str) -> Option<u64> {
    let values: Vec<f64> = metrics
        .lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() as u64)
}

/// How many lines of the file `path` contain `text` (0 when it cannot be read).
fn log_lines(path: &Path, text: &str) -> u64 {
    std::fs::read_to_string(path)
        .map(|s| s.lines().filter(|l| l.contains(text)).count() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_makes_room_for_every_pod_and_plays_the_deploy_pods_itself() {
        let plan = plan(200);
        assert_eq!(plan.nodes, 1, "400 nodes' and 200 deploy pods fit on one");
        assert_eq!(plan.published, 0);
        assert!(!plan.deploy_pods);
        assert_eq!(
            (plan.serves)("t0003-1").as_deref(),
            Some(super::super::workload::V1)
        );
        assert_eq!(plan.log, Some(LOG));
    }

    #[test]
    fn counters_are_summed_over_their_labels() {
        let text = "# HELP celld_operator_reconciles Fleet reconciles\n\
celld_operator_reconciles_total{result=\"ok\"} 12\n\
celld_operator_reconciles_total{result=\"error\"} 3\n\
celld_operator_reconciles_unchanged_total 40\n";
        assert_eq!(counter_sum(text, RECONCILES), Some(15));
        assert_eq!(counter_sum(text, "celld_operator_missing_total"), None);
    }
}
