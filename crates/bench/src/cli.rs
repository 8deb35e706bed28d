//! The command line and the order of the runs.

use crate::error::{Error, Result};
use crate::results::{Results, Scale, Skipped, Step};
use crate::{churn, floor, operator, operator_run, plot, plugin_start, previews, report};
use celld_testkit::paths::workspace_root;
use clap::Parser;
use std::path::PathBuf;
use std::time::Instant;

/// Measures celld-operator at scale and writes bench/REPORT.md and bench/scaling.svg.
#[derive(Debug, Parser)]
#[command(about, long_about = None)]
pub struct Args {
    /// Fleet counts to measure, each against its floor.
    #[arg(default_values_t = [100, 300, 1000])]
    pub fleets: Vec<usize>,

    /// Fleets created and deleted in each churn cycle (0: no churn).
    #[arg(long, default_value_t = 300)]
    pub churn_fleets: usize,

    /// Churn cycles.
    #[arg(long, default_value_t = 5)]
    pub churn_cycles: usize,

    /// Previews created on one parent fleet (0: no previews run).
    #[arg(long, default_value_t = 50)]
    pub previews: usize,

    /// Run only these parts (comma-separated or repeated; default: every part). The fleet
    /// counts have defaults, so `--only previews` is the way to run the previews alone.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Part>,

    /// Where to write REPORT.md and scaling.svg (default: the workspace's bench/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// A part of the bench, for `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The plugin's start-up.
    Plugin,
    /// The fleet counts, each against its floor.
    Fleets,
    /// The churn.
    Churn,
    /// The previews.
    Previews,
}

impl Args {
    /// Whether `part` is to run.
    fn runs(&self, part: Part) -> bool {
        self.only.is_empty() || self.only.contains(&part)
    }
}

/// Runs every measurement, writes the report and the plot, and returns their paths.
pub async fn run(args: Args) -> Result<Vec<PathBuf>> {
    let bin = operator::binary()?;
    let started = Instant::now();
    let mut counts = if args.runs(Part::Fleets) {
        args.fleets.clone()
    } else {
        Vec::new()
    };
    counts.sort_unstable();
    counts.dedup();
    let mut scales = Vec::new();
    let mut skipped = Vec::new();
    let mut steps = Vec::new();
    let load_before = load_average();
    // First, while the machine is quiet: no control plane runs yet.
    let plugin = match args
        .runs(Part::Plugin)
        .then(|| plugin_start::binary().and_then(|bin| plugin_start::measure(&bin)))
    {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            eprintln!("bench: plugin start-up not measured: {e}");
            skipped.push(Skipped {
                what: "plugin start-up".into(),
                why: e.to_string(),
            });
            None
        }
    };
    for &count in &counts {
        let step = Instant::now();
        let measured = async {
            eprintln!("bench: {count} fleets: floor");
            let floor = floor::run(count).await?;
            steps.push(Step::new(format!("floor, {count} fleets"), step));
            eprintln!("bench: {count} fleets: operator");
            let operator_step = Instant::now();
            let operator = operator_run::run(&bin, count).await?;
            steps.push(Step::new(
                format!("operator, {count} fleets"),
                operator_step,
            ));
            Ok::<_, Error>(Scale { floor, operator })
        };
        match measured.await {
            Ok(scale) => scales.push(scale),
            Err(e) => {
                eprintln!("bench: {count} fleets not measured: {e}");
                skipped.push(Skipped {
                    what: format!("{count} fleets"),
                    why: e.to_string(),
                });
            }
        }
        eprintln!(
            "bench: {count} fleets took {:.0} s",
            step.elapsed().as_secs_f64()
        );
    }
    let churn = if args.runs(Part::Churn) && args.churn_fleets > 0 && args.churn_cycles > 0 {
        eprintln!(
            "bench: churn of {} fleets × {}",
            args.churn_fleets, args.churn_cycles
        );
        let step = Instant::now();
        match churn::run(&bin, args.churn_fleets, args.churn_cycles).await {
            Ok(c) => {
                steps.push(Step::new("churn".into(), step));
                Some(c)
            }
            Err(e) => {
                eprintln!("bench: churn not measured: {e}");
                skipped.push(Skipped {
                    what: format!(
                        "churn of {} fleets × {}",
                        args.churn_fleets, args.churn_cycles
                    ),
                    why: e.to_string(),
                });
                None
            }
        }
    } else {
        None
    };
    let previews = if args.runs(Part::Previews) && args.previews > 0 {
        eprintln!("bench: {} previews of one fleet", args.previews);
        let step = Instant::now();
        match previews::run(&bin, args.previews).await {
            Ok(p) => {
                steps.push(Step::new(format!("{} previews", args.previews), step));
                Some(p)
            }
            Err(e) => {
                eprintln!("bench: previews not measured: {e}");
                skipped.push(Skipped {
                    what: format!("{} previews of one fleet", args.previews),
                    why: e.to_string(),
                });
                None
            }
        }
    } else {
        None
    };
    let results = Results {
        date: jiff::Zoned::now().date().to_string(),
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        total: started.elapsed(),
        steps,
        load: (load_before, load_average()),
        scales,
        churn,
        previews,
        plugin,
        skipped,
    };
    let dir = args.out.unwrap_or_else(|| workspace_root().join("bench"));
    std::fs::create_dir_all(&dir).map_err(Error::io("creating the report's directory", &dir))?;
    let report_path = dir.join("REPORT.md");
    std::fs::write(&report_path, report::render(&results))
        .map_err(Error::io("writing the report", &report_path))?;
    let plot_path = dir.join(report::PLOT_FILE);
    std::fs::write(&plot_path, plot::render(&results.scales)?)
        .map_err(Error::io("writing the plot", &plot_path))?;
    Ok(vec![report_path, plot_path])
}

/// The 1-minute load average of the machine (`/proc/loadavg`), NaN when unreadable.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_by_default_with_50_previews_after_the_churn() {
        let args = Args::try_parse_from(["celld-bench"]).unwrap();
        assert_eq!(args.fleets, [100, 300, 1000]);
        assert_eq!(args.previews, 50);
        for part in [Part::Plugin, Part::Fleets, Part::Churn, Part::Previews] {
            assert!(args.runs(part), "{part:?}");
        }
    }

    #[test]
    fn only_previews_skips_the_default_fleet_counts() {
        let args = Args::try_parse_from(["celld-bench", "--only", "previews", "--previews", "20"])
            .unwrap();
        // The positional list keeps its defaults; --only is what leaves them out.
        assert_eq!(args.fleets, [100, 300, 1000]);
        assert!(args.runs(Part::Previews));
        assert!(!args.runs(Part::Fleets) && !args.runs(Part::Churn) && !args.runs(Part::Plugin));
        assert_eq!(args.previews, 20);
        let two = Args::try_parse_from(["celld-bench", "--only", "churn,previews"]).unwrap();
        assert_eq!(two.only, [Part::Churn, Part::Previews]);
        assert!(Args::try_parse_from(["celld-bench", "--only", "everything"]).is_err());
    }
}
