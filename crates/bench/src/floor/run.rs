//! The floor: the fleets created as in the operator's run, each one's deployment pointer read
//! and the children the operator would make for it rendered by its own builders as its create
//! returns, and applied by server-side apply from concurrent client tasks with no operator
//! running (the StatefulSet at once, the others once its pods run: [`work`]), and one
//! status per fleet written once every child is applied and its nodes' states were read
//! (Ready: [`reads`](crate::floor::reads)); timed from the first create until every fleet's status says Ready.
//! It runs as the operator's ServiceAccount, so the API server authorizes it as it does the
//! operator, and the audit log counts its requests. Its nodes answer as the operator's run's
//! do ([`NodeAnswers`]): through the same double, or not at all.

use super::children::render;
use super::fleets::Fleets;
use super::reads::FloorReads;
use super::work;
use crate::audit::AuditTail;
use crate::error::{Error, Result};
use crate::measure::clock::Anchor;
use crate::measure::cpu_meter::CpuMeter;
use crate::measure::readiness::Watches;
use crate::measure::status_lag;
use crate::node_answers::NodeAnswers;
use crate::operator::run::AUDIT_LAG;
use crate::plane::control_plane::BenchControlPlane;
use crate::plane::identity;
use crate::results::FloorRun;
use crate::settings::{CONCURRENCY, fake_nodes, operator_username, ready_timeout};
use crate::workload::{Workload, deployed_version};
use celld_fixtures::NodeDouble;
use futures::StreamExt;
use kube::Client;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::unbounded_channel;

/// Measures the floor for `count` fleets on a fresh control plane with `nodes` fake nodes,
/// whose node reads are answered as `answers` says.
pub async fn run(count: usize, nodes: usize, answers: NodeAnswers) -> Result<FloorRun> {
    let name = format!("floor-{count}-{nodes}{}", answers.plane_suffix());
    let plane = BenchControlPlane::start(&name, nodes).await?;
    match measure(&plane, count, nodes, answers).await {
        Ok(run) => {
            plane.remove().await?;
            Ok(run)
        }
        Err(e) => Err(plane
            .gave_out(
                format!("the floor of {count} fleets on {}", fake_nodes(nodes)),
                e,
            )
            .await),
    }
}

async fn measure(
    plane: &BenchControlPlane,
    count: usize,
    nodes: usize,
    answers: NodeAnswers,
) -> Result<FloorRun> {
    let admin = plane.client();
    let kubeconfig =
        identity::operator_kubeconfig(&admin, &plane.kubeconfig(), plane.dir()).await?;
    let client = Client::try_from(celld_testkit::config_from(&kubeconfig).await?)
        .map_err(Error::kube("building the floor's client"))?;
    let workload = Workload::prepare(admin.clone(), plane.s3(), count).await?;
    let secret = workload.secret().await?;
    let mut audit = AuditTail::new(plane.audit_log(), operator_username()).with_server_load();
    let watches = Watches::start(&admin);
    let logs = plane.dir().join("logs");
    let (ready, watch) = work::watch_ready(client.clone(), logs.clone()).await?;
    // The nodes' API, each node serving its fleet's version, as in the operator's run; or, with
    // the nodes unreachable, none (it serves for as long as `_double` lives).
    let (_double, reads) = match answers {
        NodeAnswers::Answering => {
            let double =
                NodeDouble::start_per_pod("0.6.1", |pod| deployed_version(pod).unwrap_or_default())
                    .await
                    .map_err(Error::io("starting the nodes' API double", plane.dir()))?;
            let reads = FloorReads::new(&double.address);
            (Some(double), reads)
        }
        NodeAnswers::Unreachable => (None, FloorReads::unreachable()),
    };
    let (applies, to_apply) = unbounded_channel();
    let fleets = Fleets::default();
    let anchor = Anchor::now();
    let cpu = CpuMeter::start(plane.busy_processes());
    // The fleets are created as in the operator's run, and each one's children go to the
    // client tasks as soon as its create returned and its deployment pointer was read: nothing
    // can be applied for a fleet before it exists, nor its pods sized before its bucket was
    // read.
    let created = async {
        let applies = applies;
        let mut creating = std::pin::pin!(
            workload
                .creating(count)?
                .map(|fleet| async {
                    let fleet = fleet?;
                    let pointer = reads.pointer(&fleet, &secret).await?;
                    Ok::<_, Error>((fleet, pointer))
                })
                .buffer_unordered(CONCURRENCY)
        );
        let mut objects = 0;
        while let Some(read) = creating.next().await {
            let (fleet, pointer) = read?;
            let rendered = render(&fleet, &secret, pointer)?;
            fleets.created(&fleet, rendered.children.len(), rendered.status);
            // The client tasks end only once every fleet is Ready, so they are there.
            for child in rendered.children {
                objects += 1;
                let _ = applies.send(Box::new(child));
            }
        }
        Ok::<_, Error>(objects)
    };
    let sent = work::send(client, &reads, to_apply, count, &fleets, ready);
    let converged = watches.wait_ready(count, count, ready_timeout(count), logs, || Ok(()));
    let result = tokio::try_join!(created, sent, converged);
    let cpu = cpu.stop();
    watch.abort();
    let (objects, (), ()) = result?;
    let since = |t: Option<Instant>| {
        t.map_or(Duration::ZERO, |t| {
            t.saturating_duration_since(anchor.instant())
        })
    };
    let (statefulsets, ready_fleets) = (watches.statefulsets(), watches.fleets());
    let statefulsets_ready = since(statefulsets.last_ready());
    let last = ready_fleets.last_ready().unwrap_or_else(Instant::now);
    drop(watches);
    eprintln!(
        "bench: floor: {objects} objects applied and {} statuses written on {}; every fleet Ready after {:.1} s",
        fleets.statuses_written(),
        fake_nodes(nodes),
        since(Some(last)).as_secs_f64()
    );
    tokio::time::sleep(AUDIT_LAG).await;
    let requests = audit.poll()?;
    let (from, to) = (
        anchor.wall(anchor.instant()),
        anchor.wall(last + Duration::from_millis(1)),
    );
    let tally = requests.tally(from, to);
    let by_resource = requests.by_resource(from, to);
    let status_lag = status_lag::measure(
        &statefulsets,
        &ready_fleets,
        &anchor,
        requests.status_writes(),
    );
    let server = audit.server().map(|s| s.load(from, to)).unwrap_or_default();
    let server_writes = audit
        .server()
        .map(|s| s.writes_by_resource(from, to))
        .unwrap_or_default();
    Ok(FloorRun {
        fleets: count,
        nodes,
        objects,
        statefulsets_ready,
        fleets_ready: since(Some(last)),
        status_lag,
        requests: tally,
        by_resource,
        server,
        server_writes,
        cpu,
        kwok_refused: plane.kwok_refused(from, to),
    })
}
