//! `top`: the fleets of a namespace (or of all namespaces) by pressure, from the capacity their
//! nodes last reported (status.capacity) and what spec.autoscaling decided (status.autoscaling).
//! It reads the fleets only: no node is asked anything.

pub mod rows;

use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::error::Result;
use crate::text::output;
use crate::text::output_format::OutputFormat;
use clap::{Args, ValueEnum};
use rows::SortBy;

/// `top -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TopOutput {
    /// The table with more columns
    Wide,
    /// The rows as JSON
    Json,
    /// The rows as YAML
    Yaml,
}

/// `top`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # The fleets of the namespace, the most pressed first
  kubectl celld top -n apps

  # Every namespace, by resident memory, with the autoscaler's holding reason
  kubectl celld top -A --sort-by rss -o wide

  # For scripts: the most pressed fleet, and its activations waiting for capacity
  kubectl celld top -A -o json | jq -r '.fleets[0] | [.name, .capacity.total.capacityWaiting]'",
    override_usage = "kubectl celld top [OPTIONS]"
)]
pub struct TopArgs {
    /// List the fleets of all namespaces
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    /// Output format: wide, json or yaml (default: a table)
    #[arg(short = 'o', long, value_name = "FORMAT", value_enum)]
    pub output: Option<TopOutput>,

    /// The order of the fleets; fleets whose nodes were never read come last
    #[arg(long, value_name = "ORDER", value_enum, default_value_t = SortBy::Pressure)]
    pub sort_by: SortBy,

    /// Only fleets whose labels match this selector (e.g. team=web,tier!=canary)
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
}

/// Runs `top`.
pub async fn run(cluster: &ConnectArgs, args: TopArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let ns = (!args.all_namespaces).then_some(target.namespace.as_str());
    let fleets =
        crate::cluster::fleets::list_selected(&target, ns, args.selector.as_deref()).await?;
    let mut list: Vec<rows::TopRow> = fleets.iter().map(rows::row).collect();
    rows::sort(&mut list, args.sort_by);
    let now = jiff::Timestamp::now();
    let text = match args.output {
        None | Some(TopOutput::Wide) if list.is_empty() => {
            eprintln!("{}", nothing_found(ns, args.selector.as_deref()));
            String::new()
        }
        None => rows::render(&list, args.all_namespaces, false, now),
        Some(TopOutput::Wide) => rows::render(&list, args.all_namespaces, true, now),
        Some(TopOutput::Json) => {
            output::serialize(&rows::TopList { fleets: list }, OutputFormat::Json)?
        }
        Some(TopOutput::Yaml) => {
            output::serialize(&rows::TopList { fleets: list }, OutputFormat::Yaml)?
        }
    };
    output::print(&text)?;
    Ok(0)
}

/// What an empty listing says, as kubectl does: `No CelldFleets found in namespace apps.`
pub fn nothing_found(namespace: Option<&str>, selector: Option<&str>) -> String {
    let place = match namespace {
        Some(ns) => format!("in namespace {ns}"),
        None => "in any namespace".to_string(),
    };
    match selector {
        Some(s) => format!("No CelldFleets found {place} matching {s}."),
        None => format!("No CelldFleets found {place}."),
    }
}
