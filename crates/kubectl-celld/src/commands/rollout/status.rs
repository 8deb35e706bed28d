//! `rollout status NAME`: one rollout as the operator reports it, as text, `-o yaml|json`, or
//! kubectl's `-o jsonpath=TEMPLATE`; with `-w`, again at each change until it has ended, the
//! exit code then saying whether it succeeded.

use super::render;
use super::report::{self, RolloutReport};
use crate::cluster::kubeconfig::{self, ConnectArgs, Target};
use crate::cluster::rollouts;
use crate::error::rollout::RolloutError;
use crate::error::{Error, Result};
use crate::text::output;
use crate::text::output_format::OutputFormat;
use celld_api::rollout::RolloutPhase;
use clap::Args;
use std::time::Duration;

/// How often `rollout status -w` reads the rollout again.
const WATCH_INTERVAL: Duration = Duration::from_secs(2);

/// An output format of `rollout status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutOutput {
    /// Text for people.
    Text,
    /// The document as YAML or JSON.
    Document(OutputFormat),
    /// kubectl's jsonpath template against the JSON document.
    JsonPath(String),
}

/// Parses `-o`.
pub fn parse_output(value: &str) -> Result<RolloutOutput, String> {
    match value {
        "text" => Ok(RolloutOutput::Text),
        "yaml" => Ok(RolloutOutput::Document(OutputFormat::Yaml)),
        "json" => Ok(RolloutOutput::Document(OutputFormat::Json)),
        other => match other.strip_prefix("jsonpath=") {
            Some(t) if !t.is_empty() => Ok(RolloutOutput::JsonPath(t.to_string())),
            _ => Err(
                "use text, yaml, json or jsonpath=TEMPLATE (e.g. jsonpath='{.phase}')".to_string(),
            ),
        },
    }
}

/// `rollout status`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Phase, revision, each wave and its fleets (from -> to, adopted N/M), skipped fleets
  kubectl celld rollout status web -n tenants

  # Print it again at each change until it has ended; exit 0 only if it succeeded
  kubectl celld rollout status web -w

  # For scripts
  kubectl celld rollout status web -o json | jq -r '.waves[].fleets[] | [.name, .phase] | @tsv'
  kubectl celld rollout status web -o jsonpath='{.phase}'",
    override_usage = "kubectl celld rollout status [OPTIONS] <NAME>"
)]
pub struct StatusArgs {
    /// The rollout
    #[arg(value_name = "NAME", add = crate::cluster::complete::rollouts())]
    pub name: String,

    /// Output format: text, yaml, json or jsonpath=TEMPLATE
    #[arg(short = 'o', long, value_name = "FORMAT", value_parser = parse_output, default_value = "text")]
    pub output: RolloutOutput,

    /// Watch: print again at each change until the rollout has ended (Succeeded, Halted,
    /// RolledBack or Aborted); exit 0 if it Succeeded, 1 otherwise (Ctrl-C to stop: 130)
    #[arg(short = 'w', long)]
    pub watch: bool,
}

/// `report` in the format asked for, at `now`.
pub fn show(
    report: &RolloutReport,
    format: &RolloutOutput,
    now: jiff::Timestamp,
) -> Result<String> {
    match format {
        RolloutOutput::Text => Ok(render::render(report, now)),
        RolloutOutput::Document(format) => output::serialize(report, *format),
        RolloutOutput::JsonPath(template) => {
            let doc = serde_json::to_value(report).map_err(|e| Error::Output(e.to_string()))?;
            crate::text::jsonpath_template::render(template, &doc)
                .map_err(|e| Error::Usage(format!("-o jsonpath: {e}")))
        }
    }
}

/// What separates two outputs of a watch: a blank line between texts, `---` between YAML
/// documents, nothing between JSON documents (a stream `jq` reads).
fn separator(format: &RolloutOutput) -> &'static str {
    match format {
        RolloutOutput::Text => "\n",
        RolloutOutput::Document(OutputFormat::Yaml) => "---\n",
        RolloutOutput::Document(OutputFormat::Json) | RolloutOutput::JsonPath(_) => "",
    }
}

/// How a watch ends once the rollout has ended: 0 for Succeeded, else the error saying how it
/// ended.
pub fn outcome(report: &RolloutReport) -> Result<u8> {
    match report.phase {
        Some(phase) if phase != RolloutPhase::Succeeded => Err(RolloutError::Unsuccessful {
            name: report.name.clone(),
            namespace: report.namespace.clone(),
            phase: phase.as_str(),
            why: report.stalled.clone(),
        }
        .into()),
        _ => Ok(0),
    }
}

/// Runs `rollout status`.
pub async fn run(cluster: &ConnectArgs, args: StatusArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let mut last = report::build(&rollouts::get(&target, &args.name).await?);
    output::print(&show(&last, &args.output, jiff::Timestamp::now())?)?;
    if !args.watch {
        return Ok(0);
    }
    while !last.ended {
        pause(&target, &args.name).await?;
        let next = report::build(&rollouts::get(&target, &args.name).await?);
        if next != last {
            let text = show(&next, &args.output, jiff::Timestamp::now())?;
            output::print(&format!("{}{text}", separator(&args.output)))?;
            last = next;
        }
    }
    outcome(&last)
}

/// Sleeps between two reads; Ctrl-C ends the watch, saying the rollout goes on.
async fn pause(target: &Target, name: &str) -> Result<()> {
    let ns = &target.namespace;
    tokio::select! {
        () = tokio::time::sleep(WATCH_INTERVAL) => Ok(()),
        _ = tokio::signal::ctrl_c() => Err(Error::Interrupted {
            note: format!(
                "the watch stopped; CelldRollout {ns}/{name} goes on as it is, see it with: kubectl celld rollout status {name} -n {ns}"
            ),
        }),
    }
}
