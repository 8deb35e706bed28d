//! `rollback FLEET [--to VERSION]`: point the fleet back at a version published earlier, with
//! the same compare-and-swap writes as `celld deploy` (the script's pointer, then last the
//! fleet pointer, each `If-Match` on the ETag read), then ask every ready node to reload and
//! wait until the operator reports every ready node serving it. A fleet whose Worker comes
//! from spec.source has publishing from it suspended first ([`suspend`]).

pub mod suspend;
pub mod target;

use crate::bucket::keys::{self, FLEET_POINTER, Pointer};
use crate::bucket::versions::{self, Version};
use crate::bucket::{BucketClient, Expect};
use crate::cluster::adoption::{self, WaitArgs};
use crate::cluster::annotate;
use crate::cluster::fleet_context::FleetContext;
use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::refused::{GoBack, ReloadRefused};
use crate::error::{Error, Result};
use crate::pod::refused;
use crate::pod::reload;
use crate::pod::work_pod::{WorkPod, WorkPodArgs};
use crate::text::output;
use crate::text::progress::Progress;
use clap::Args;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// `rollback`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Go back to the version published before the live one
  kubectl celld rollback web -n apps

  # Go back to a given version (see: kubectl celld history web)
  kubectl celld rollback web --to 0123456789abcdef

  # Return once the pointers are written, without waiting for every node
  kubectl celld rollback web --no-wait

A fleet whose Worker comes from spec.source gets the annotation
platform.celld.dev/source-suspended first, so the operator does not publish the source over
the rollback; remove it to publish from the source again:
  kubectl annotate celldfleet web platform.celld.dev/source-suspended-",
    override_usage = "kubectl celld rollback [OPTIONS] <FLEET>"
)]
pub struct RollbackArgs {
    /// The fleet
    #[arg(value_name = "FLEET", add = crate::cluster::complete::fleets())]
    pub fleet: String,

    /// The version to go back to, as VERSION or SCRIPT/VERSION (default: the version published
    /// before the live one)
    #[arg(long, value_name = "VERSION")]
    pub to: Option<String>,

    /// Do not ask the nodes to reload; they adopt the version within 30s
    #[arg(long)]
    pub no_reload: bool,

    /// The pod that writes the pointers and reloads the nodes.
    #[command(flatten)]
    pub pod: WorkPodArgs,

    /// The wait for every ready node to serve the version.
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// The tools the pod needs besides sh: the bucket agent, and curl to ask the nodes to reload.
fn tools(no_reload: bool) -> Vec<&'static str> {
    let mut tools = vec![crate::bucket::client::AGENT];
    if !no_reload {
        tools.push(crate::pod::preflight::RELOAD_TOOL);
    }
    tools
}

/// Runs `rollback`.
pub async fn run(cluster: &ConnectArgs, args: RollbackArgs) -> Result<u8> {
    let context = FleetContext::load(cluster, &args.fleet).await?;
    let mut progress = Progress::new();
    let pod = WorkPod::start(&context, &args.pod, &tools(args.no_reload), &mut progress).await?;
    let state = State::default();
    let steps = steps(&context, &pod, &args, &mut progress, &state);
    let result = tokio::select! {
        r = steps => r,
        _ = tokio::signal::ctrl_c() => Err(Error::Interrupted {
            note: state.interrupted_note(&context),
        }),
    };
    let mut progress = Progress::new();
    pod.delete(context.namespace(), &mut progress).await;
    result
}

/// How far the rollback got, shared so an interruption can tell.
#[derive(Default)]
struct State {
    /// The rollback set the source-suspended annotation.
    suspended: Arc<AtomicBool>,
    /// A pointer is being written.
    writing: Arc<AtomicBool>,
}

impl State {
    fn interrupted_note(&self, context: &FleetContext) -> String {
        let suspended = self.suspended.load(Ordering::SeqCst);
        let base = if self.writing.load(Ordering::SeqCst) {
            format!(
                "the pointers were being written, so the rollback may have happened; check with: kubectl celld history {} -n {}",
                context.name(),
                context.namespace()
            )
        } else if suspended {
            "before any pointer was written: nothing was rolled back".to_string()
        } else {
            "before any pointer was written: nothing changed".to_string()
        };
        base + &suspend::interrupted_note(context.name(), context.namespace(), suspended)
    }
}

async fn steps(
    context: &FleetContext,
    pod: &WorkPod,
    args: &RollbackArgs,
    progress: &mut Progress,
    state: &State,
) -> Result<u8> {
    let bucket = BucketClient::new(context, pod);
    // The pointer first: its ETag is what the last write expects, so a deploy in between
    // makes the rollback fail instead of undoing that deploy.
    let live = versions::pointer(&bucket).await?;
    let history = versions::read(&bucket, context.name(), context.namespace()).await?;
    let target = target::pick(&history, args.to.as_deref()).map_err(Error::Rollback)?;
    let Some((live, live_object)) = live else {
        return Err(Error::Rollback(format!(
            "{FLEET_POINTER} under {} vanished while reading: re-run the rollback",
            bucket.bucket()
        )));
    };
    progress.note(&format!(
        "Rolling back fleet {}/{} from version {} to version {} (script {})",
        context.namespace(),
        context.name(),
        live.version,
        target.version,
        target.script
    ));
    let suspension =
        suspend::before_writing(context, &target.version, &live.version, progress).await?;
    if matches!(suspension, Some(suspend::Suspended::ByRollback(_))) {
        state.suspended.store(true, Ordering::SeqCst);
    }
    state.writing.store(true, Ordering::SeqCst);
    if let Err(e) = write_pointers(&bucket, target, &live_object.expect, progress).await {
        suspend::undo(context, &suspension, progress).await;
        return Err(e);
    }
    output::print(&format!(
        "Rolled back fleet {}/{} to version {} (script {}); it was on {}\n",
        context.namespace(),
        context.name(),
        target.version,
        target.script,
        live.version
    ))?;
    if let Some(suspension) = &suspension {
        output::print(&suspend::message(
            context.name(),
            context.namespace(),
            suspension,
        ))?;
    }
    let stamp = annotate::deployed_at(context).await;
    if let Err(warning) = &stamp {
        progress.note(warning);
    }
    if args.no_reload {
        progress.note(
            "Not asking the nodes to reload (--no-reload): they adopt the version within 30s",
        );
    } else {
        let nodes = context.nodes().await?;
        let results = reload::reload(&pod.pods, &pod.pod, &nodes).await;
        output::print(&reload::report(&nodes, &results))?;
        if let Some(nodes) = refused::refusals(&results) {
            return Err(Error::ReloadRefused(Box::new(ReloadRefused {
                fleet: context.name().to_string(),
                namespace: context.namespace().to_string(),
                what: format!("version {} of script {}", target.version, target.script),
                nodes,
                go_back: GoBack::To(live.version.clone()),
            })));
        }
    }
    adoption::unless_told_not_to(context, stamp.ok(), &args.wait, progress).await?;
    Ok(0)
}

/// Writes the script's pointer, then last the fleet pointer (on `fleet_expect`, the version
/// read first), both naming `target`.
async fn write_pointers(
    bucket: &BucketClient,
    target: &Version,
    fleet_expect: &Expect,
    progress: &mut Progress,
) -> Result<()> {
    let body = Pointer::to(&target.script, &target.version).body();
    let script_key = keys::script_pointer(&target.script);
    let script_expect = match bucket.get(&script_key).await? {
        Some(object) => object.expect,
        None => Expect::Absent,
    };
    bucket.put_if(&script_key, &body, &script_expect).await?;
    progress.note(&format!(
        "Wrote {script_key} (compare-and-swap on {script_expect})"
    ));
    bucket.put_if(FLEET_POINTER, &body, fleet_expect).await?;
    progress.note(&format!(
        "Wrote {FLEET_POINTER} (compare-and-swap on {fleet_expect})"
    ));
    Ok(())
}
