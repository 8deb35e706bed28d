//! Fan-out: `deploy DIR --fleets A,B` or `deploy DIR --selector SELECTOR [-A]`. The directory is
//! packed once; then each fleet gets its own deploy pod, in its own namespace, with its own
//! storage and credentials (s3://, gs:// or az://, inline or through its CelldObjectStore), and
//! the same archive runs through the same steps as a single deploy, at most `--concurrency`
//! fleets at a time. Each fleet's progress lines carry its name; celld's output is written as
//! one block per fleet. At the end, a table gives each fleet's storage, version, duration and
//! result; the exit code is 0 only when every fleet was deployed (see
//! [`FanOutIncomplete`](crate::error::fan_out::FanOutIncomplete)).
//!
//! `--dry-run` creates nothing: it checks each fleet as a deploy would before creating its Job
//! (storage, credentials Secret, spec.source, `--vars-from-secret`) and lists the targets.
//! Ctrl-C stops the fleets being deployed (deleting their Jobs) and starts no other; the table
//! then says which fleets were published, which may be, and which were not touched.

use super::args::{DeployArgs, deploy_image, source_word};
use super::fleet_result::{self, FleetResult, Outcome};
use super::pipeline::{self, Done, Output, Source};
use super::results_table;
use super::storage_text::storage_cell;
use super::targets::{self, FanOut, FleetId};
use crate::cluster::kubeconfig::{self, ConnectArgs, Target};
use crate::error::{Error, Result};
use crate::text::output;
use crate::text::progress::Progress;
use futures::StreamExt;
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::watch;

/// Runs the fan-out to the fleets `fan_out` names; the table on stdout, progress on stderr.
pub async fn run(cluster: &ConnectArgs, args: DeployArgs, fan_out: FanOut) -> Result<u8> {
    let mut progress = Progress::new();
    let source = pipeline::source(&args, &mut progress).await?;
    let target = kubeconfig::connect(cluster).await?;
    let fleets = targets::list(&target, &fan_out).await?;
    progress.note(&format!(
        "{} {} fleet{}, {} at a time",
        if args.dry_run {
            "Dry run: checking"
        } else {
            "Deploying to"
        },
        fleets.len(),
        if fleets.len() == 1 { "" } else { "s" },
        args.concurrency
    ));

    let (stop, stopped) = watch::channel(false);
    let work = futures::stream::iter(fleets)
        .map(|id| one(&target, id, &args, &source, stopped.clone()))
        .buffer_unordered(usize::from(args.concurrency))
        .collect::<Vec<FleetResult>>();
    tokio::pin!(work);
    let mut interrupted = false;
    let results = tokio::select! {
        results = &mut work => results,
        _ = tokio::signal::ctrl_c() => {
            interrupted = true;
            let _ = stop.send(true);
            progress.note("Interrupted: stopping the fleets being deployed (and deleting their Jobs); no other fleet is started");
            work.await
        }
    };

    output::print(&results_table::render(&results, args.dry_run))?;
    if let Some(warning) = fleet_result::versions_note(&results) {
        progress.note(&warning);
    }
    output::print(&format!(
        "{}\n",
        fleet_result::summary(&results, args.dry_run)
    ))?;
    if interrupted {
        return Err(Error::Interrupted {
            note: fleet_result::interrupted_note(&results),
        });
    }
    let again = |fleets: &str| {
        format!(
            "kubectl celld deploy {} --fleets {fleets}",
            source_word(&args)
        )
    };
    match fleet_result::incomplete(&results, args.dry_run, again) {
        Some(e) => Err(e),
        None => Ok(0),
    }
}

/// Runs `work` unless (or until) the fan-out is stopped: None when it was.
async fn unless_stopped<T>(
    stopped: &mut watch::Receiver<bool>,
    work: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        done = work => Some(done),
        Ok(_) = stopped.wait_for(|stop| *stop) => None,
    }
}

/// Deploys to (or, in a dry run, checks) one fleet; never fails: how it ended is its result.
async fn one(
    target: &Target,
    fleet: FleetId,
    args: &DeployArgs,
    source: &Source,
    mut stopped: watch::Receiver<bool>,
) -> FleetResult {
    let mut result = FleetResult {
        fleet: fleet.clone(),
        storage: None,
        image: None,
        version: None,
        took: None,
        outcome: Outcome::Untouched,
    };
    if *stopped.borrow() {
        return result;
    }
    let mut progress = Progress::prefixed(format!("[{fleet}] "));
    let in_namespace = Target {
        client: target.client.clone(),
        namespace: fleet.namespace.clone(),
    };
    let prepared = unless_stopped(
        &mut stopped,
        pipeline::prepare(in_namespace, &fleet.name, args, false, &mut progress),
    )
    .await;
    let context = match prepared {
        None => {
            result.outcome = Outcome::Interrupted { publishing: false };
            return result;
        }
        Some(Err(e)) => {
            result.outcome = match args.dry_run {
                true => Outcome::WouldFail(e.to_string()),
                false => Outcome::Failed(e.to_string()),
            };
            progress.note(&format!("Refused, nothing was created: {e}"));
            return result;
        }
        Some(Ok(context)) => context,
    };
    result.storage = Some(storage_cell(&context.storage));
    result.image = Some(deploy_image(args, &context.fleet.spec.image));
    if args.dry_run {
        result.outcome = Outcome::WouldDeploy;
        return result;
    }
    if *stopped.borrow() {
        result.outcome = Outcome::Interrupted { publishing: false };
        return result;
    }

    let started = Instant::now();
    let job = match pipeline::create_job(&context, args, &mut progress).await {
        Ok(job) => job,
        Err(e) => {
            result.outcome = Outcome::Failed(e.to_string());
            progress.note(&format!("Failed, nothing was created: {e}"));
            return result;
        }
    };
    let job_name = job.metadata.name.clone().unwrap_or_default();
    let publishing = progress.publishing();
    let done = unless_stopped(
        &mut stopped,
        pipeline::steps(
            &context,
            &job,
            args,
            source,
            &mut progress,
            Output::PerFleet,
        ),
    )
    .await;
    pipeline::finish(&context, &job_name, args, &mut progress).await;
    result.took = Some(started.elapsed());
    let published_maybe = publishing.load(Ordering::SeqCst);
    result.outcome = match done {
        None => Outcome::Interrupted {
            publishing: published_maybe,
        },
        Some(Err(e)) if published_maybe => Outcome::Failed(format!(
            "{e} (celld deploy had started, so the version may be published; check with: kubectl celld status {} -n {})",
            fleet.name, fleet.namespace
        )),
        Some(Err(e)) => Outcome::Failed(e.to_string()),
        Some(Ok(Done::CelldFailed { code, why })) => Outcome::Failed(match why.is_empty() {
            true => format!("celld deploy failed with exit code {code}; nothing was made live"),
            false => {
                format!("celld deploy failed with exit code {code}; nothing was made live: {why}")
            }
        }),
        Some(Ok(Done::Checked)) => Outcome::WouldDeploy,
        Some(Ok(Done::Published { version, adoption })) => {
            result.version = version;
            match adoption {
                Ok(()) => Outcome::Published,
                Err(e) => Outcome::NotAdopted(e.to_string()),
            }
        }
    };
    progress.note(&format!("Result: {}", result.outcome.describe()));
    result
}
