//! Previews on one parent fleet under one operator: the parent created and settled first; then
//! the previews, from the first create until every preview is Ready and the operator has
//! settled; then an idle window; then as many previews again, for the memory each one adds
//! once the operator's one-time costs are paid.

use super::watch::PreviewWatches;
use super::workload::{
    PARENT, PREVIEW_REPLICAS, PreviewWorkload, previews_namespace, served_version,
};
use crate::error::{Error, Result};
use crate::measure::clock::Anchor;
use crate::measure::proc_stats::{rss_file_kib, rss_kib};
use crate::measure::readiness::max_lag;
use crate::node_answers::NodeAnswers;
use crate::operator::run::{AUDIT_LAG, Plan, Setup, settle};
use crate::results::PreviewsRun;
use crate::settings::{IDLE_WINDOW, REPLICAS, nodes_for, ready_timeout, settle_limit};
use std::path::Path;
use std::time::{Duration, Instant};

/// What the control plane of `count` previews (and `count` more) is prepared for: room for the
/// parent's and the previews' pods, no bench fleet, nodes serving the parent's and each
/// preview's version.
fn plan(count: usize) -> Plan {
    Plan {
        nodes: nodes_for(REPLICAS as usize + 2 * count * PREVIEW_REPLICAS),
        published: 0,
        serves: served_version,
        server_load: false,
        answers: NodeAnswers::Answering,
        deploy_pods: true,
        log: None,
    }
}

/// Measures the operator with `count` previews of one fleet on a fresh control plane.
pub async fn run(bin: &Path, count: usize) -> Result<PreviewsRun> {
    let mut setup = Setup::start(bin, &format!("previews-{count}"), plan(count)).await?;
    let client = setup.plane.client();
    let previews = PreviewWorkload::prepare(client.clone(), setup.plane.s3(), 2 * count).await?;
    let watches = PreviewWatches::start(&client, &previews_namespace());
    let logs = setup.logs();

    let parent_anchor = Anchor::now();
    previews.create_parent().await?;
    let operator = &mut setup.operator;
    watches
        .wait_fleet(PARENT, ready_timeout(1), logs.clone(), || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    let parent_ready = watches.fleets().last_ready().unwrap_or_else(Instant::now);
    settle(
        &mut setup.audit,
        &parent_anchor,
        parent_ready,
        settle_limit(1),
    )
    .await?;
    let parent_rss_kib = rss_kib(setup.pid);
    eprintln!("bench: previews: the parent is Ready and settled; {parent_rss_kib} KiB resident");

    let anchor = Anchor::now();
    previews.create(1..=count).await?;
    let operator = &mut setup.operator;
    watches
        .wait_previews(count, ready_timeout(count), logs, || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    let seen_previews = watches.previews();
    let seen_fleets = watches.fleets();
    drop(watches);
    let all_ready = seen_previews.last_ready().unwrap_or_else(Instant::now);
    eprintln!(
        "bench: previews: every preview Ready after {:.1} s; waiting for the operator's writes to stop",
        all_ready
            .saturating_duration_since(anchor.instant())
            .as_secs_f64()
    );
    let (settled_at, writes_stopped) =
        settle(&mut setup.audit, &anchor, all_ready, settle_limit(count)).await?;
    eprintln!(
        "bench: previews: settled; idle for {} s",
        IDLE_WINDOW.as_secs()
    );
    let settled_rss_kib = rss_kib(setup.pid);
    let settled_file_kib = rss_file_kib(setup.pid);

    let idle = setup.idle().await?;
    tokio::time::sleep(AUDIT_LAG).await;
    let requests = setup.audit.poll()?;
    let (from, to) = (
        anchor.wall(anchor.instant()),
        anchor.wall(settled_at + Duration::from_millis(1)),
    );
    let since = |t: Instant| t.saturating_duration_since(anchor.instant());
    let mut preview_fleets = seen_fleets.ready.clone();
    preview_fleets.remove(PARENT);
    let mut run = PreviewsRun {
        previews: count,
        fleets_ready: preview_fleets
            .values()
            .max()
            .map_or(Duration::ZERO, |t| since(*t)),
        previews_ready: since(all_ready),
        status_lag: max_lag(&preview_fleets, &seen_previews.ready),
        settled: since(settled_at),
        writes_stopped,
        to_settle: requests.tally(from, to),
        writes_to_settle: requests.writes_by_resource(from, to),
        idle: requests.tally(anchor.wall(idle.start), anchor.wall(idle.end)),
        idle_window: idle.window(),
        idle_state_reads: idle.state_reads,
        idle_cpu: idle.cpu,
        empty_rss_kib: setup.empty_rss_kib,
        empty_file_kib: setup.empty_file_kib,
        parent_rss_kib,
        settled_rss_kib,
        settled_file_kib,
        doubled_rss_kib: 0,
    };
    run.doubled_rss_kib = twice(&mut setup, &previews, count).await?;
    setup.remove().await?;
    Ok(run)
}

/// Creates previews `count + 1 ..= 2 × count`, waits until all are Ready and the operator
/// settled, and reads its resident memory (KiB).
async fn twice(setup: &mut Setup, previews: &PreviewWorkload, count: usize) -> Result<u64> {
    let client = setup.plane.client();
    let watches = PreviewWatches::start(&client, &previews_namespace());
    let logs = setup.logs();
    let anchor = Anchor::now();
    previews.create(count + 1..=2 * count).await?;
    let operator = &mut setup.operator;
    watches
        .wait_previews(2 * count, ready_timeout(count), logs, || {
            operator.check_alive().map_err(Error::from)
        })
        .await?;
    let all_ready = watches.previews().last_ready().unwrap_or_else(Instant::now);
    drop(watches);
    settle(
        &mut setup.audit,
        &anchor,
        all_ready,
        settle_limit(2 * count),
    )
    .await?;
    let rss = rss_kib(setup.pid);
    eprintln!(
        "bench: previews: {} previews settled; {rss} KiB resident",
        2 * count
    );
    Ok(rss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_makes_room_for_the_parent_and_every_preview() {
        let plan = plan(50);
        assert_eq!(plan.nodes, 1, "102 pods fit on one fake node");
        assert_eq!(plan.published, 0);
        assert_eq!((plan.serves)("pr-7-0").as_deref(), Some("0000000000000007"));
    }
}
