//! `history FLEET`: the Worker versions published under the fleet's bucket prefix, read from a
//! deploy pod of the fleet (the credentials never leave the cluster).

pub mod render;

use crate::bucket::BucketClient;
use crate::bucket::versions;
use crate::cluster::fleet_context::FleetContext;
use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::{Error, Result};
use crate::pod::work_pod::{WorkPod, WorkPodArgs};
use crate::text::output;
use crate::text::output_format::OutputFormat;
use crate::text::progress::Progress;
use clap::Args;

/// `history`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Every version published for fleet 'web', newest first; * marks the live one
  kubectl celld history web -n apps

  # For scripts
  kubectl celld history web -o json | jq -r '.versions[1].version'",
    override_usage = "kubectl celld history [OPTIONS] <FLEET>"
)]
pub struct HistoryArgs {
    /// The fleet
    #[arg(value_name = "FLEET", add = crate::cluster::complete::fleets())]
    pub fleet: String,

    /// Output format: yaml or json (default: a table)
    #[arg(short = 'o', long, value_name = "FORMAT", value_enum)]
    pub output: Option<OutputFormat>,

    /// The pod that reads the bucket.
    #[command(flatten)]
    pub pod: WorkPodArgs,
}

/// The tool the pod needs besides sh: the bucket agent.
pub const TOOLS: &[&str] = &[crate::bucket::client::AGENT];

/// Runs `history`.
pub async fn run(cluster: &ConnectArgs, args: HistoryArgs) -> Result<u8> {
    let context = FleetContext::load(cluster, &args.fleet).await?;
    let mut progress = Progress::new();
    let pod = WorkPod::start(&context, &args.pod, TOOLS, &mut progress).await?;
    let bucket = BucketClient::new(&context, &pod);
    let read = versions::read(&bucket, context.name(), context.namespace());
    let result = tokio::select! {
        r = read => r,
        _ = tokio::signal::ctrl_c() => Err(Error::Interrupted { note: "history only reads the bucket: nothing changed".into() }),
    };
    pod.delete(context.namespace(), &mut progress).await;
    let history = result?;
    let text = match args.output {
        Some(format) => output::serialize(&history, format)?,
        None => render::render(&history, jiff::Timestamp::now()),
    };
    output::print(&text)?;
    Ok(0)
}
