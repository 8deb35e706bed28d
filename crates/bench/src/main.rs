//! `celld-bench [FLEETS...]`: measures the celld-operator binary at scale on fresh local
//! control planes and writes `bench/REPORT.md` and the plot `bench/scaling.svg`.
//!
//! First it chooses the fake nodes (`--nodes`, or the calibration: the floor of the largest
//! count on more and more of them). For each fleet count it measures a floor (the fleets
//! created, each one's children applied as its create returns with no operator, and one
//! status per fleet once its StatefulSet is ready) and the operator (time to ready StatefulSets and Ready fleets, the
//! status lag, API requests until settled and per idle minute from the audit log, the API
//! server's rate and latencies, memory and CPU), each on a control plane of its own; then a
//! churn of fleets created and deleted again and again under one operator; then previews of one
//! fleet (`--previews`, 50 by default), each a fleet of its own. `--only` runs some of these
//! parts alone; `--single FLEETS` measures one count alone into a report of its own.
//!
//! The modules, by what they measure: [`fleet_counts`] runs each count's [`floor`] and
//! [`operator`] run, on the fake nodes [`calibration_rule`] chooses; [`churn`], [`previews`],
//! [`rollout`] (a CelldRollout over many fleets) and [`plugin_start`] are the other parts; [`cli`] orders them. Below those: [`workload`] (the
//! fleets a run creates), [`plane`] (the control plane each run stands on), [`measure`] (the
//! watches, clocks and meters), [`audit`] (the API server's audit log); [`results`] holds what
//! was measured and [`report`] writes it; [`settings`] and [`error`] are shared by all.

mod audit;
mod calibration_rule;
mod churn;
mod cli;
mod error;
mod fleet_counts;
mod floor;
mod measure;
mod node_answers;
mod operator;
mod plane;
mod plugin_start;
mod previews;
mod report;
mod results;
mod rollout;
mod settings;
mod workload;

use clap::Parser;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let invocation = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args = cli::Args::parse();
    match cli::run(args, invocation).await {
        Ok(paths) => {
            for path in paths {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}
