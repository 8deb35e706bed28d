//! The operator on one fleet count: from the first create until every fleet is Ready and the
//! operator has settled, then an idle window.

use super::process;
use crate::audit::AuditTail;
use crate::error::{Error, Result};
use crate::measure::clock::Anchor;
use crate::measure::cpu_meter::CpuMeter;
use crate::measure::events;
use crate::measure::proc_stats::{clock_tick, cpu_ticks, rss_file_kib, rss_kib};
use crate::measure::readiness::Watches;
use crate::measure::status_lag;
use crate::node_answers::NodeAnswers;
use crate::plane::control_plane::BenchControlPlane;
use crate::plane::identity;
use crate::results::{CapacityRound, OperatorRun};
use crate::settings::{
    FIRST_CAPACITY_AGE, IDLE_WINDOW, OPERATOR, QUIET, WARM_UP, capacity_round_limit, fake_nodes,
    operator_username, ready_timeout, settle_limit,
};
use crate::workload::Workload;
use celld_fixtures::{NodeDouble, OperatorProcess};
use jiff::SignedDuration;
use std::path::Path;
use std::time::{Duration, Instant};

/// How far the audit log may lag behind the requests (the API server writes it in batches of
/// at most a second).
pub const AUDIT_LAG: Duration = Duration::from_secs(3);

/// What a run's control plane is prepared for.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Its fake nodes.
    pub nodes: usize,
    /// Bench fleets (`f0`, `f1`...) whose deployments are published before any is created.
    pub published: usize,
    /// The version the node of each pod serves, by the pod's name (none: an empty version).
    pub serves: fn(&str) -> Option<String>,
    /// Whether the audit log is read for the API server's load too (every user's requests).
    pub server_load: bool,
    /// Whether the nodes answer (through a double serving `serves`) or cannot be read.
    pub answers: NodeAnswers,
    /// Whether the bench ends every deploy pod as published (the fleets' deployments are
    /// published before they are created); false when the run plays them itself.
    pub deploy_pods: bool,
    /// A further `RUST_LOG` directive for the operator, if any (what the run reads from its
    /// log).
    pub log: Option<&'static str>,
}

impl Plan {
    /// For `fleets` bench fleets on `nodes` fake nodes, their nodes answering.
    pub fn fleets(fleets: usize, nodes: usize) -> Self {
        Plan {
            nodes,
            published: fleets,
            serves: crate::workload::deployed_version,
            server_load: true,
            answers: NodeAnswers::Answering,
            deploy_pods: true,
            log: None,
        }
    }
}

/// A control plane with the operator running on it, as its ServiceAccount, with no fleet yet.
pub struct Setup {
    /// The control plane.
    pub plane: BenchControlPlane,
    /// The namespace, Secret and published deployments.
    pub workload: Workload,
    /// The operator.
    pub operator: OperatorProcess,
    /// Its process id.
    pub pid: u32,
    /// The operator's requests in the audit log.
    pub audit: AuditTail,
    /// Its resident memory before any fleet, KiB.
    pub empty_rss_kib: u64,
    /// The file-backed part of it, KiB.
    pub empty_file_kib: u64,
    /// Ends the deploy pods of fleets with spec.source as published, unless the run plays
    /// them itself.
    deploy_pods: Option<tokio::task::JoinHandle<()>>,
    /// The nodes' API the operator reads; none when the nodes cannot be read.
    nodes: Option<NodeDouble>,
}

impl Setup {
    /// Starts a fresh control plane `name` prepared as `plan` says, starts the operator and
    /// reads its empty memory.
    pub async fn start(bin: &Path, name: &str, plan: Plan) -> Result<Self> {
        let plane = BenchControlPlane::start(name, plan.nodes).await?;
        match Operating::start(&plane, bin, plan).await {
            Ok(o) => Ok(Setup {
                plane,
                workload: o.workload,
                operator: o.operator,
                pid: o.pid,
                audit: o.audit,
                empty_rss_kib: o.empty_rss_kib,
                empty_file_kib: o.empty_file_kib,
                deploy_pods: o.deploy_pods,
                nodes: o.nodes,
            }),
            Err(e) => Err(plane
                .gave_out(format!("starting the operator on control plane {name}"), e)
                .await),
        }
    }

    /// Where the logs are.
    pub fn logs(&self) -> std::path::PathBuf {
        self.plane.dir().join("logs")
    }

    /// What shares the cores while the fleets converge: the control plane, the operator and
    /// the bench (its watches, creates and the nodes' API the operator reads).
    pub fn busy(&self) -> Vec<(String, u32)> {
        let mut processes = self.plane.busy_processes();
        processes.push((OPERATOR.into(), self.pid));
        processes
    }

    /// Stops the operator and removes the control plane.
    pub async fn remove(self) -> Result<()> {
        if let Some(task) = &self.deploy_pods {
            task.abort();
        }
        self.operator.stop().await;
        self.plane.remove().await
    }

    /// `error`, which ended `what`, with what gave out in the control plane; the operator and
    /// the control plane are stopped, the logs kept.
    pub async fn gave_out(self, what: String, error: Error) -> Error {
        if let Some(task) = &self.deploy_pods {
            task.abort();
        }
        let health = self.plane.gave_out(what, error).await;
        self.operator.stop().await;
        health
    }

    /// The stand-in for the nodes' API the operator reads (none when the nodes cannot be read).
    pub fn node_double(&self) -> Option<NodeDouble> {
        self.nodes.clone()
    }

    /// The node `GET /state` reads the double answered so far (none without a double).
    fn state_reads(&self) -> usize {
        self.nodes.as_ref().map_or(0, NodeDouble::total_state_reads)
    }

    /// Leaves the operator alone for [`IDLE_WINDOW`] and measures what it did meanwhile; the
    /// requests are read from the audit log afterwards, over [`Idle::start`]..[`Idle::end`].
    pub async fn idle(&mut self) -> Result<Idle> {
        let start = Instant::now();
        let cpu_before = cpu_ticks(self.pid);
        let reads_before = self.state_reads();
        tokio::time::sleep(IDLE_WINDOW).await;
        let cpu_after = cpu_ticks(self.pid);
        let state_reads = self.state_reads() - reads_before;
        let end = Instant::now();
        self.operator.check_alive()?;
        Ok(Idle {
            start,
            end,
            state_reads: state_reads as u64,
            cpu: clock_tick()
                * u32::try_from(cpu_after.saturating_sub(cpu_before)).unwrap_or(u32::MAX),
        })
    }
}

/// What [`Setup`] holds besides its control plane, started on it.
struct Operating {
    workload: Workload,
    operator: OperatorProcess,
    pid: u32,
    audit: AuditTail,
    empty_rss_kib: u64,
    empty_file_kib: u64,
    deploy_pods: Option<tokio::task::JoinHandle<()>>,
    nodes: Option<NodeDouble>,
}

impl Operating {
    /// Prepares `plane` as `plan` says, starts the operator and reads its empty memory.
    async fn start(plane: &BenchControlPlane, bin: &Path, plan: Plan) -> Result<Self> {
        let client = plane.client();
        let kubeconfig =
            identity::operator_kubeconfig(&client, &plane.kubeconfig(), plane.dir()).await?;
        let workload = Workload::prepare(client.clone(), plane.s3(), plan.published).await?;
        let deploy_pods = plan.deploy_pods.then(|| super::deploy_pods::start(client));
        let audit = AuditTail::new(plane.audit_log(), operator_username());
        let audit = if plan.server_load {
            audit.with_server_load()
        } else {
            audit
        };
        // The nodes' API the operator reads, each node serving its fleet's version; it serves
        // for as long as the bench runs. With the nodes unreachable, none.
        let serves = plan.serves;
        let nodes = match plan.answers {
            NodeAnswers::Answering => Some(
                NodeDouble::start_per_pod("0.6.1", move |pod| serves(pod).unwrap_or_default())
                    .await
                    .map_err(|source| Error::Io {
                        what: "starting the nodes' API double",
                        path: plane.dir().to_path_buf(),
                        source,
                    })?,
            ),
            NodeAnswers::Unreachable => None,
        };
        let operator = process::start(
            bin,
            &kubeconfig,
            &plane.dir().join("logs/operator.log"),
            nodes.as_ref().map(|n| n.address.as_str()),
            plan.log,
        )
        .await?;
        let pid = operator.pid().ok_or_else(|| Error::Process {
            what: "the operator".into(),
            detail: format!("it exited at once; its log:\n{}", operator.log_tail()),
        })?;
        tokio::time::sleep(WARM_UP).await;
        let empty_rss_kib = rss_kib(pid);
        let empty_file_kib = rss_file_kib(pid);
        Ok(Operating {
            workload,
            operator,
            pid,
            audit,
            empty_rss_kib,
            empty_file_kib,
            deploy_pods,
            nodes,
        })
    }
}

/// What the operator did in an idle window.
#[derive(Debug, Clone, Copy)]
pub struct Idle {
    /// When the window began.
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
    /// Node `GET /state` requests it sent (capacity reads) that the double answered; 0 when
    /// the nodes cannot be read.
    pub state_reads: u64,
    /// CPU time (user + system) it used.
    pub cpu: Duration,
}

impl Idle {
    /// How long the window was.
    pub fn window(&self) -> Duration {
        self.end - self.start
    }
}

/// Waits until the operator has written nothing for [`QUIET`] after `all_ready`, or until
/// `limit` after it; returns when it last wrote (or `all_ready` if later) and whether its
/// writes stopped.
pub async fn settle(
    audit: &mut AuditTail,
    anchor: &Anchor,
    all_ready: Instant,
    limit: Duration,
) -> Result<(Instant, bool)> {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = Instant::now();
        let last_write = audit.poll()?.last_write();
        let since_start = last_write
            .map(|w| w.duration_since(anchor.wall(anchor.instant())))
            .and_then(|d| Duration::try_from(d.max(SignedDuration::ZERO)).ok());
        let last = since_start
            .map(|d| anchor.instant() + d)
            .map_or(all_ready, |w| w.max(all_ready));
        if now.saturating_duration_since(last) >= QUIET {
            return Ok((last, true));
        }
        if now.saturating_duration_since(all_ready) >= limit {
            return Ok((now, false));
        }
    }
}

/// Waits, before an idle window that would overlap the first round of capacity reads, until
/// the bench's watch saw every fleet show its capacity (at most [`capacity_round_limit`] from
/// the first create), then until the operator wrote nothing for [`QUIET`]: the idle window then
/// measures the steady state, not the once-only first capacity statuses (and the reads of the
/// fleets whose nodes were not read yet).
pub(crate) async fn first_capacity_round(
    setup: &mut Setup,
    watches: &Watches,
    anchor: &Anchor,
    count: usize,
) -> Result<CapacityRound> {
    eprintln!("bench: operator: waiting for every fleet to show its capacity");
    let deadline = anchor.instant() + capacity_round_limit(count);
    let operator = &mut setup.operator;
    let shown = watches
        .wait_shown(count, deadline, || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    let last_shown = watches.fleets().shown.values().max().copied();
    let (settled, _) = settle(
        &mut setup.audit,
        anchor,
        last_shown.unwrap_or_else(Instant::now),
        settle_limit(count),
    )
    .await?;
    Ok(CapacityRound {
        shown: shown as u64,
        took: last_shown.map_or(Duration::ZERO, |t| {
            t.saturating_duration_since(anchor.instant())
        }),
        settled: settled.saturating_duration_since(anchor.instant()),
    })
}

/// Measures the operator on `count` fleets on a fresh control plane with `nodes` fake nodes,
/// whose node reads are answered as `answers` says.
pub async fn run(
    bin: &Path,
    count: usize,
    nodes: usize,
    answers: NodeAnswers,
) -> Result<OperatorRun> {
    let name = format!("operator-{count}{}", answers.plane_suffix());
    let plan = Plan {
        answers,
        ..Plan::fleets(count, nodes)
    };
    let mut setup = Setup::start(bin, &name, plan).await?;
    match measure(&mut setup, count, nodes).await {
        Ok(run) => {
            setup.remove().await?;
            Ok(run)
        }
        Err(e) => Err(setup
            .gave_out(
                format!("the operator on {count} fleets on {}", fake_nodes(nodes)),
                e,
            )
            .await),
    }
}

async fn measure(setup: &mut Setup, count: usize, nodes: usize) -> Result<OperatorRun> {
    let client = setup.plane.client();
    let watches = Watches::start(&client);
    let anchor = Anchor::now();
    let cpu = CpuMeter::start(setup.busy());
    setup.workload.create(count).await?;
    let logs = setup.logs();
    let operator = &mut setup.operator;
    watches
        .wait_ready(count, count, ready_timeout(count), logs, || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    let cpu = cpu.stop();
    let statefulsets = watches.statefulsets();
    let fleets = watches.fleets();
    let all_ready = fleets.last_ready().unwrap_or_else(Instant::now);
    eprintln!(
        "bench: operator: every fleet Ready after {:.1} s; waiting for its writes to stop",
        all_ready
            .saturating_duration_since(anchor.instant())
            .as_secs_f64()
    );
    let (settled_at, writes_stopped) =
        settle(&mut setup.audit, &anchor, all_ready, settle_limit(count)).await?;
    // Read before anything else could publish more; they live for an hour.
    let events = events::count(&client).await?;
    let capacity_round = if settled_at + IDLE_WINDOW > anchor.instant() + FIRST_CAPACITY_AGE {
        Some(first_capacity_round(setup, &watches, &anchor, count).await?)
    } else {
        None
    };
    eprintln!(
        "bench: operator: settled; idle for {} s",
        IDLE_WINDOW.as_secs()
    );
    let settled_rss_kib = rss_kib(setup.pid);
    let control_plane = setup.plane.memory();

    let idle = setup.idle().await?;
    // The watches ran on through the idle window for this.
    let idle_first_capacity = watches
        .fleets()
        .shown
        .values()
        .filter(|at| (idle.start..idle.end).contains(*at))
        .count() as u64;
    drop(watches);
    tokio::time::sleep(AUDIT_LAG).await;
    let requests = setup.audit.poll()?;
    let (from, to) = (
        anchor.wall(anchor.instant()),
        anchor.wall(settled_at + Duration::from_millis(1)),
    );
    let to_settle = requests.tally(from, to);
    let by_resource = requests.by_resource(from, to);
    let status_lag = status_lag::measure(&statefulsets, &fleets, &anchor, requests.status_writes());
    let services_first = requests.services_first();
    let idle_tally = requests.tally(anchor.wall(idle.start), anchor.wall(idle.end));
    let ready_to = anchor.wall(all_ready + Duration::from_millis(1));
    let server = setup
        .audit
        .server()
        .map(|s| s.load(from, ready_to))
        .unwrap_or_default();
    let server_writes = setup
        .audit
        .server()
        .map(|s| s.writes_by_resource(from, ready_to))
        .unwrap_or_default();
    Ok(OperatorRun {
        fleets: count,
        nodes,
        statefulsets_ready: statefulsets.last_ready().map_or(Duration::ZERO, |t| {
            t.saturating_duration_since(anchor.instant())
        }),
        fleets_ready: all_ready.saturating_duration_since(anchor.instant()),
        status_lag,
        services_first,
        settled: settled_at.saturating_duration_since(anchor.instant()),
        writes_stopped,
        to_settle,
        by_resource,
        events,
        server,
        server_writes,
        cpu,
        kwok_refused: setup.plane.kwok_refused(from, ready_to),
        control_plane,
        idle: idle_tally,
        idle_window: idle.window(),
        idle_state_reads: idle.state_reads,
        idle_first_capacity,
        capacity_round,
        idle_cpu: idle.cpu,
        empty_rss_kib: setup.empty_rss_kib,
        settled_rss_kib,
    })
}
