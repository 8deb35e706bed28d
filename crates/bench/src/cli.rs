//! The command line and the order of the runs.

use crate::error::{Error, Result};
use crate::node_answers::NodeAnswers;
use crate::report::plot;
use crate::results::{Results, Skipped, Step};
use crate::rollout::workload::WAVES;
use crate::{churn, fleet_counts, operator, plugin_start, previews, report, rollout};
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

    /// Measure this one fleet count alone against its floor, judged against the targets at
    /// 10,000 fleets (`make bench FLEETS=10000`): no churn, previews or plugin start-up; the
    /// report goes to REPORT-<FLEETS>.md, leaving REPORT.md as it is.
    #[arg(
        long,
        value_name = "FLEETS",
        value_parser = clap::value_parser!(u64).range(1..),
        conflicts_with_all = ["fleets", "only", "churn_fleets", "churn_cycles", "previews"]
    )]
    pub single: Option<u64>,

    /// Run every fleet count (floor and operator) on this many kwok fake nodes instead of
    /// calibrating them on the floor of the largest count.
    #[arg(long, value_name = "NODES", value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,

    /// Run the floor and the operator of the largest fleet count this many times, alternately,
    /// each on a fresh control plane: its converge ratio is judged on the median of the pairs
    /// (default: 3; 1 for a count measured alone).
    #[arg(long, value_name = "PAIRS", value_parser = clap::value_parser!(u64).range(1..))]
    pub pairs: Option<u64>,

    /// Fleets created and deleted in each churn cycle (0: no churn).
    #[arg(long, default_value_t = 300)]
    pub churn_fleets: usize,

    /// Churn cycles.
    #[arg(long, default_value_t = 5)]
    pub churn_cycles: usize,

    /// How the nodes answer the node reads (`GET /state`) of the floor and the operator
    /// (comma-separated or repeated): `answering`, a double answering for every node, runs every
    /// fleet count; `unreachable`, no node answering (the operator dials each node at its name
    /// in the cluster's DNS, which does not resolve here), runs the largest count once more
    /// (default: both; `answering` for a count measured alone).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "MODE")]
    pub node_answers: Vec<NodeAnswers>,

    /// Previews created on one parent fleet (0: no previews run).
    #[arg(long, default_value_t = 50)]
    pub previews: usize,

    /// Run only the rollout, over this many fleets (at most 1,000, a rollout's most): a
    /// CelldRollout on two stores against its floor (every part runs one over 200); the report
    /// goes to REPORT-rollout-<FLEETS>.md, leaving REPORT.md as it is.
    #[arg(
        long,
        value_name = "FLEETS",
        value_parser = clap::value_parser!(u64).range(1..=1000),
        conflicts_with_all = [
            "fleets", "only", "single", "nodes", "pairs", "churn_fleets", "churn_cycles",
            "node_answers", "previews"
        ]
    )]
    pub rollout: Option<u64>,

    /// Run only these parts (comma-separated or repeated; default: every part). The fleet
    /// counts have defaults, so `--only previews` is the way to run the previews alone.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Part>,

    /// Where to write REPORT.md and scaling.svg (default: the workspace's bench/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The floor and operator pairs of the largest fleet count in the default report: one pair
/// alone moved its converge ratio by 0.15 from run to run.
const DEFAULT_PAIRS: usize = 3;

/// The fleets of the rollout when every part runs (or `--only rollout`).
pub const ROLLOUT_FLEETS: usize = 200;

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
    /// A rollout over many fleets.
    Rollout,
}

impl Args {
    /// Whether `part` is to run.
    fn runs(&self, part: Part) -> bool {
        match (self.single, self.rollout) {
            (Some(_), _) => part == Part::Fleets,
            (None, Some(_)) => part == Part::Rollout,
            (None, None) => self.only.is_empty() || self.only.contains(&part),
        }
    }

    /// The fleets of the rollout.
    fn rollout_fleets(&self) -> usize {
        self.rollout
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(ROLLOUT_FLEETS)
    }

    /// The rollout's fleets when it is measured alone (`--rollout`).
    fn rollout_alone(&self) -> Option<usize> {
        self.rollout.map(|_| self.rollout_fleets())
    }

    /// The fleet count measured alone, if any.
    fn single(&self) -> Option<usize> {
        self.single.and_then(|n| usize::try_from(n).ok())
    }

    /// How many floor and operator pairs the largest fleet count runs.
    fn pairs(&self) -> usize {
        match (self.pairs, self.single) {
            (Some(n), _) => usize::try_from(n).unwrap_or(usize::MAX),
            (None, Some(_)) => 1,
            (None, None) => DEFAULT_PAIRS,
        }
    }

    /// How the nodes answer, in the order the modes run (answering first).
    fn answers(&self) -> Vec<NodeAnswers> {
        let mut answers = match (self.node_answers.is_empty(), self.single) {
            (false, _) => self.node_answers.clone(),
            (true, Some(_)) => vec![NodeAnswers::Answering],
            (true, None) => vec![NodeAnswers::Answering, NodeAnswers::Unreachable],
        };
        answers.sort_unstable();
        answers.dedup();
        answers
    }

    /// The fleet counts to measure, in increasing order.
    fn counts(&self) -> Vec<usize> {
        let mut counts = match self.single() {
            Some(n) => vec![n],
            None if self.runs(Part::Fleets) => self.fleets.clone(),
            None => Vec::new(),
        };
        counts.sort_unstable();
        counts.dedup();
        counts
    }
}

/// Runs every measurement, writes the report (and, but for one count alone, the plot), and
/// returns their paths; `invocation`, the arguments `args` were parsed from, goes in the report.
pub async fn run(args: Args, invocation: Vec<String>) -> Result<Vec<PathBuf>> {
    let bin = operator::process::binary()?;
    let started = Instant::now();
    let counts = args.counts();
    let given_nodes = args.nodes.and_then(|n| usize::try_from(n).ok());
    fleet_counts::check_nodes(given_nodes, counts.last().copied().unwrap_or(0))?;
    let mut skipped = Vec::new();
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
    let measured =
        fleet_counts::measure(&bin, &counts, given_nodes, args.pairs(), &args.answers()).await;
    skipped.extend(measured.skipped);
    let mut steps = measured.steps;
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
        match previews::run::run(&bin, args.previews).await {
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
    let rollout = if args.runs(Part::Rollout) {
        let fleets = args.rollout_fleets();
        eprintln!(
            "bench: a rollout over {fleets} fleets in waves {}",
            WAVES.join(", ")
        );
        let step = Instant::now();
        match rollout::run::run(&bin, fleets).await {
            Ok(r) => {
                steps.push(Step::new(format!("rollout over {fleets} fleets"), step));
                Some(r)
            }
            Err(e) => {
                eprintln!("bench: rollout not measured: {e}");
                skipped.push(Skipped {
                    what: format!("a rollout over {fleets} fleets"),
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
        invocation,
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        total: started.elapsed(),
        single: args.single(),
        nodes: measured.nodes,
        steps,
        load: (load_before, load_average()),
        scales: measured.scales,
        repeats: measured.repeats,
        unreachable: measured.unreachable,
        churn,
        previews,
        rollout,
        rollout_alone: args.rollout_alone(),
        plugin,
        skipped,
    };
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| workspace_root().join("bench"));
    std::fs::create_dir_all(&dir).map_err(Error::io("creating the report's directory", &dir))?;
    let report_path = dir.join(report::file_name(args.single(), args.rollout_alone()));
    std::fs::write(&report_path, report::render(&results))
        .map_err(Error::io("writing the report", &report_path))?;
    let mut written = vec![report_path];
    if let Some(r) = &results.rollout {
        let path = dir.join(report::rollout_plot::file_name(args.rollout_alone()));
        std::fs::write(&path, report::rollout_plot::render(r)?)
            .map_err(Error::io("writing the rollout's plot", &path))?;
        written.push(path);
    }
    if args.single.is_some() || args.rollout.is_some() {
        return Ok(written);
    }
    let plot_path = dir.join(report::PLOT_FILE);
    std::fs::write(&plot_path, plot::render(&results.scales)?)
        .map_err(Error::io("writing the plot", &plot_path))?;
    written.push(plot_path);
    Ok(written)
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
        for part in [
            Part::Plugin,
            Part::Fleets,
            Part::Churn,
            Part::Previews,
            Part::Rollout,
        ] {
            assert!(args.runs(part), "{part:?}");
        }
        assert_eq!(args.rollout_fleets(), 200);
        assert_eq!(args.rollout_alone(), None);
    }

    #[test]
    fn a_rollout_alone_runs_nothing_else_into_a_report_of_its_own() {
        let args = Args::try_parse_from(["celld-bench", "--rollout", "300"]).unwrap();
        assert!(args.runs(Part::Rollout));
        for part in [Part::Plugin, Part::Fleets, Part::Churn, Part::Previews] {
            assert!(!args.runs(part), "{part:?}");
        }
        assert!(args.counts().is_empty());
        assert_eq!(args.rollout_alone(), Some(300));
        let only = Args::try_parse_from(["celld-bench", "--only", "rollout"]).unwrap();
        assert!(only.runs(Part::Rollout) && !only.runs(Part::Previews));
        assert_eq!((only.rollout_fleets(), only.rollout_alone()), (200, None));
        for refused in [
            &["celld-bench", "--rollout", "0"][..],
            &["celld-bench", "--rollout", "1001"],
            &["celld-bench", "--rollout", "200", "100"],
            &["celld-bench", "--rollout", "200", "--single", "100"],
            &["celld-bench", "--rollout", "200", "--only", "previews"],
        ] {
            assert!(Args::try_parse_from(refused).is_err(), "{refused:?}");
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

    #[test]
    fn one_count_alone_runs_only_its_fleets_against_its_floor() {
        let args = Args::try_parse_from(["celld-bench", "--single", "10000"]).unwrap();
        assert_eq!(args.counts(), [10_000]);
        assert!(args.runs(Part::Fleets));
        assert!(!args.runs(Part::Churn) && !args.runs(Part::Previews) && !args.runs(Part::Plugin));
        assert_eq!(args.nodes, None, "calibrated");
        assert_eq!(
            args.pairs(),
            1,
            "one pair of an hour each is enough at 10,000"
        );
        let given =
            Args::try_parse_from(["celld-bench", "--single", "200", "--nodes", "8"]).unwrap();
        assert_eq!((given.counts(), given.nodes), (vec![200], Some(8)));
        for refused in [
            &["celld-bench", "--single", "200", "300"][..],
            &["celld-bench", "--single", "200", "--only", "churn"],
            &["celld-bench", "--single", "200", "--previews", "5"],
            &["celld-bench", "--single", "0"],
            &["celld-bench", "--nodes", "0"],
            &["celld-bench", "--pairs", "0"],
        ] {
            assert!(Args::try_parse_from(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn the_largest_count_runs_three_pairs_unless_told() {
        let default = Args::try_parse_from(["celld-bench"]).unwrap();
        assert_eq!(default.pairs(), 3);
        let told = Args::try_parse_from(["celld-bench", "--pairs", "5"]).unwrap();
        assert_eq!(told.pairs(), 5);
        let alone =
            Args::try_parse_from(["celld-bench", "--single", "1000", "--pairs", "3"]).unwrap();
        assert_eq!(alone.pairs(), 3);
    }

    #[test]
    fn the_nodes_answer_and_then_cannot_be_read_unless_told() {
        use NodeAnswers::{Answering, Unreachable};
        let all = Args::try_parse_from(["celld-bench"]).unwrap();
        assert_eq!(all.answers(), [Answering, Unreachable]);
        // A count alone keeps its nodes answering, as `make bench FLEETS=10000` always did.
        let alone = Args::try_parse_from(["celld-bench", "--single", "40"]).unwrap();
        assert_eq!(alone.answers(), [Answering]);
        let told = Args::try_parse_from([
            "celld-bench",
            "--single",
            "40",
            "--node-answers",
            "unreachable,answering,unreachable",
        ])
        .unwrap();
        assert_eq!(told.answers(), [Answering, Unreachable]);
        let one = Args::try_parse_from(["celld-bench", "--node-answers", "unreachable"]).unwrap();
        assert_eq!(one.answers(), [Unreachable]);
        assert!(Args::try_parse_from(["celld-bench", "--node-answers", "some"]).is_err());
    }

    #[test]
    fn the_counts_are_sorted_once_each() {
        let args = Args::try_parse_from(["celld-bench", "300", "100", "300"]).unwrap();
        assert_eq!(args.counts(), [100, 300]);
        let none = Args::try_parse_from(["celld-bench", "--only", "churn"]).unwrap();
        assert!(none.counts().is_empty());
    }
}
