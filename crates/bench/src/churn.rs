//! The churn: fleets created, all Ready, deleted and gone, cycle after cycle under one
//! operator; then its memory against the empty operator's, and its open connections.
//!
//! One fleet comes and goes first: the operator's memory after it is the warm empty operator's,
//! whose code for a reconcile is paged in and whose one-time state is built, so the report can
//! tell that part of the growth from what the churn's many fleets leave.

use crate::error::{Error, Result};
use crate::measure::clock::Anchor;
use crate::measure::proc_stats::{established_tcp_remote_ports, rss_file_kib, rss_kib};
use crate::measure::readiness::Watches;
use crate::operator::run::{Plan, Setup};
use crate::results::{ChurnRun, Connections, Cycle};
use crate::settings::{CHURN_REST, CHURN_SETTLE, nodes_for, pods_of, ready_timeout};
use std::path::Path;
use std::time::{Duration, Instant};

/// Creates and deletes `fleets` fleets `cycles` times on a fresh control plane, on the fewest
/// fake nodes their pods fit on (nothing here is timed against a floor).
pub async fn run(bin: &Path, fleets: usize, cycles: usize) -> Result<ChurnRun> {
    let plan = Plan {
        server_load: false,
        ..Plan::fleets(fleets, nodes_for(pods_of(fleets)))
    };
    let mut setup = Setup::start(bin, &format!("churn-{fleets}"), plan).await?;
    let client = setup.plane.client();
    let watches = Watches::start(&client);
    cycle(&mut setup, &watches, 1).await?;
    tokio::time::sleep(CHURN_REST).await;
    setup.operator.check_alive()?;
    let warm_rss_kib = rss_kib(setup.pid);
    let warm_file_kib = rss_file_kib(setup.pid);
    eprintln!("bench: churn: {warm_rss_kib} KiB resident after one fleet came and went");
    let anchor = Anchor::now();
    let mut times = Vec::with_capacity(cycles);
    let mut cycle_rss_kib = Vec::with_capacity(cycles);
    for n in 1..=cycles {
        let cycle = cycle(&mut setup, &watches, fleets).await?;
        times.push(cycle);
        cycle_rss_kib.push(rss_kib(setup.pid));
        eprintln!(
            "bench: churn cycle {n}/{cycles}: {:.1} s to Ready, {:.1} s to gone",
            cycle.to_ready.as_secs_f64(),
            cycle.to_gone.as_secs_f64()
        );
    }
    drop(watches);
    let gone = Instant::now();
    tokio::time::sleep(CHURN_REST).await;
    setup.operator.check_alive()?;
    let pid = setup.pid;
    let after_rss_kib = rss_kib(pid);
    eprintln!(
        "bench: churn: {} KiB resident after {} s; read again after {} s",
        after_rss_kib,
        CHURN_REST.as_secs(),
        CHURN_SETTLE.as_secs()
    );
    tokio::time::sleep(CHURN_SETTLE.saturating_sub(gone.elapsed())).await;
    setup.operator.check_alive()?;
    let settled_rss_kib = rss_kib(pid);
    let settled_file_kib = rss_file_kib(pid);
    let connections = Connections::classify(
        &established_tcp_remote_ports(pid),
        setup.plane.port("APISERVER_PORT"),
        setup.plane.port("S3_PORT"),
    );
    let end = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let requests = setup
        .audit
        .poll()?
        .tally(anchor.wall(anchor.instant()), anchor.wall(end));
    let run = ChurnRun {
        fleets,
        cycles: times,
        empty_rss_kib: setup.empty_rss_kib,
        empty_file_kib: setup.empty_file_kib,
        warm_rss_kib,
        warm_file_kib,
        cycle_rss_kib,
        after_rss_kib,
        settled_rss_kib,
        settled_file_kib,
        connections,
        requests,
    };
    setup.remove().await?;
    Ok(run)
}

/// Creates `fleets` fleets, waits until all are Ready, deletes them and waits until all are gone.
async fn cycle(setup: &mut Setup, watches: &Watches, fleets: usize) -> Result<Cycle> {
    watches.forget_ready();
    let started = Instant::now();
    setup.workload.create(fleets).await?;
    let logs = setup.logs();
    let operator = &mut setup.operator;
    watches
        .wait_ready(fleets, fleets, ready_timeout(fleets), logs.clone(), || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    let to_ready = started.elapsed();
    let deleted = Instant::now();
    setup.workload.delete_all().await?;
    watches
        .wait_gone(ready_timeout(fleets), logs, || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    Ok(Cycle {
        to_ready,
        to_gone: deleted.elapsed(),
    })
}
