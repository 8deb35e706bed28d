//! The fleet counts, each against its floor on the same fake nodes: first the fake nodes are
//! chosen (given, or calibrated on the floor of the largest count), then every count runs its
//! floor (the calibration's own, for the largest) and the operator, and the largest count runs
//! more pairs of floor and operator, for the spread of its converge ratio. All of that with the
//! nodes answering; with them unreachable, the largest count runs one pair more.

use crate::calibration_rule::next_nodes;
use crate::error::Error;
use crate::node_answers::NodeAnswers;
use crate::results::{Calibration, FloorRun, Nodes, Scale, Skipped, Step};
use crate::settings::{fake_nodes, nodes_for, pods_of};
use crate::{floor, operator};
use std::path::Path;
use std::time::Instant;

/// What the fleet counts measured, and what they could not.
#[derive(Debug, Default)]
pub struct Measured {
    /// How many fake nodes they ran on; `None` when no count was asked for.
    pub nodes: Option<Nodes>,
    /// One per count measured, in increasing order.
    pub scales: Vec<Scale>,
    /// The further pairs of floor and operator of the largest count, in the order they ran.
    pub repeats: Vec<Scale>,
    /// The largest count's pair with nodes that cannot be read, when asked for.
    pub unreachable: Option<Scale>,
    /// The counts (or calibration runs) that could not be measured, and why.
    pub skipped: Vec<Skipped>,
    /// How long each run took.
    pub steps: Vec<Step>,
}

/// Measures the operator `bin` at each of `counts` (increasing) against its floor, on `given`
/// fake nodes or, when `None`, on the number the calibration chooses; the largest count runs
/// `pairs` pairs of floor and operator in all. That is with the nodes answering, when `answers`
/// holds [`NodeAnswers::Answering`]; when it holds [`NodeAnswers::Unreachable`], the largest
/// count runs one pair with nodes that cannot be read too. The calibration times the floor in
/// the first mode of `answers` (sorted, answering first).
pub async fn measure(
    bin: &Path,
    counts: &[usize],
    given: Option<usize>,
    pairs: usize,
    answers: &[NodeAnswers],
) -> Measured {
    let mut m = Measured::default();
    let (Some(&largest), Some(&first)) = (counts.last(), answers.iter().min()) else {
        return m;
    };
    let nodes = match given {
        Some(n) => Nodes::Given(n),
        None => Nodes::Calibrated(calibrate(largest, first, &mut m.steps).await),
    };
    if answers.contains(&NodeAnswers::Answering) {
        answering(bin, counts, &nodes, pairs, &mut m).await;
    }
    if answers.contains(&NodeAnswers::Unreachable) {
        let step = Instant::now();
        let what = format!("{largest} fleets, {}", NodeAnswers::Unreachable.describe());
        // The calibration's chosen floor is this pair's when it was timed in this mode.
        let calibrated = match &nodes {
            Nodes::Calibrated(c) if first == NodeAnswers::Unreachable => c.chosen().cloned(),
            _ => None,
        };
        let floor = match calibrated {
            Some(floor) => Ok(floor),
            None => {
                floor_run(
                    largest,
                    nodes.count(),
                    NodeAnswers::Unreachable,
                    &mut m.steps,
                )
                .await
            }
        };
        let measured = match floor {
            Ok(floor) => {
                operator_beside(
                    bin,
                    floor,
                    nodes.count(),
                    NodeAnswers::Unreachable,
                    &mut m.steps,
                )
                .await
            }
            Err(e) => Err(e),
        };
        m.unreachable = kept(measured, &what, &mut m.skipped);
        eprintln!("bench: {what} took {:.0} s", step.elapsed().as_secs_f64());
    }
    m.nodes = Some(nodes);
    m
}

/// The counts with their nodes answering, on `nodes`: each count's floor and operator, then the
/// largest count's further pairs up to `pairs`; into `m`.
async fn answering(bin: &Path, counts: &[usize], nodes: &Nodes, pairs: usize, m: &mut Measured) {
    let Some(&largest) = counts.last() else {
        return;
    };
    let answers = NodeAnswers::Answering;
    for &count in counts {
        let step = Instant::now();
        let floor = match &nodes {
            Nodes::Calibrated(c) if c.fleets == count => match c.chosen() {
                Some(run) => Ok(run.clone()),
                None => {
                    // Its floor gave out on every number of nodes tried: so would the operator.
                    m.skipped.extend(c.failed.clone().map(|f| Skipped {
                        what: format!("{count} fleets"),
                        why: f.why,
                    }));
                    continue;
                }
            },
            _ => floor_run(count, nodes.count(), answers, &mut m.steps).await,
        };
        let measured = match floor {
            Ok(floor) => operator_beside(bin, floor, nodes.count(), answers, &mut m.steps).await,
            Err(e) => Err(e),
        };
        let what = format!("{count} fleets");
        m.scales.extend(kept(measured, &what, &mut m.skipped));
        eprintln!("bench: {what} took {:.0} s", step.elapsed().as_secs_f64());
    }
    if m.scales.last().is_some_and(|s| s.fleets() == largest) {
        for pair in 2..=pairs {
            let step = Instant::now();
            eprintln!("bench: {largest} fleets: pair {pair} of {pairs}");
            let measured = floor_then_operator(bin, largest, nodes.count(), &mut m.steps).await;
            let what = format!("{largest} fleets, pair {pair} of {pairs}");
            m.repeats.extend(kept(measured, &what, &mut m.skipped));
            eprintln!("bench: {what} took {:.0} s", step.elapsed().as_secs_f64());
        }
    }
}

/// The scale `measured`, or nothing with `what` and why added to `skipped`.
fn kept(measured: Result<Scale, Error>, what: &str, skipped: &mut Vec<Skipped>) -> Option<Scale> {
    match measured {
        Ok(scale) => Some(scale),
        Err(e) => {
            eprintln!("bench: {what} not measured: {e}");
            skipped.push(Skipped {
                what: what.to_string(),
                why: e.to_string(),
            });
            None
        }
    }
}

/// One more pair, the nodes answering: the floor of `count` fleets on `nodes` fake nodes, then
/// the operator `bin`.
async fn floor_then_operator(
    bin: &Path,
    count: usize,
    nodes: usize,
    steps: &mut Vec<Step>,
) -> Result<Scale, Error> {
    let answers = NodeAnswers::Answering;
    let floor = floor_run(count, nodes, answers, steps).await?;
    operator_beside(bin, floor, nodes, answers, steps).await
}

/// `what` with the mode named when the nodes cannot be read.
fn with_mode(what: String, answers: NodeAnswers) -> String {
    match answers {
        NodeAnswers::Answering => what,
        NodeAnswers::Unreachable => format!("{what}, {}", answers.describe()),
    }
}

/// The floor of `count` fleets on `nodes` fake nodes, their reads answered as `answers` says;
/// its time added to `steps`.
async fn floor_run(
    count: usize,
    nodes: usize,
    answers: NodeAnswers,
    steps: &mut Vec<Step>,
) -> Result<FloorRun, Error> {
    let on = with_mode(fake_nodes(nodes), answers);
    eprintln!("bench: {count} fleets: floor on {on}");
    let step = Instant::now();
    let floor = floor::run::run(count, nodes, answers).await;
    steps.push(Step::new(format!("floor, {count} fleets, {on}"), step));
    floor
}

/// The operator `bin` on the fleets and fake nodes of `floor`, their reads answered as
/// `answers` says, paired with it; its time added to `steps`.
async fn operator_beside(
    bin: &Path,
    floor: FloorRun,
    nodes: usize,
    answers: NodeAnswers,
    steps: &mut Vec<Step>,
) -> Result<Scale, Error> {
    let count = floor.fleets;
    let on = with_mode(fake_nodes(nodes), answers);
    eprintln!("bench: {count} fleets: operator on {on}");
    let step = Instant::now();
    let operator = operator::run::run(bin, count, nodes, answers).await;
    steps.push(Step::new(
        with_mode(format!("operator, {count} fleets"), answers),
        step,
    ));
    operator.map(|operator| Scale { floor, operator })
}

/// Times the floor of `fleets` fleets, their node reads answered as `answers` says, on more and
/// more fake nodes (see [`crate::calibration_rule`]); a run that fails ends it.
async fn calibrate(fleets: usize, answers: NodeAnswers, steps: &mut Vec<Step>) -> Calibration {
    let mut c = Calibration {
        fleets,
        start: nodes_for(pods_of(fleets)),
        runs: Vec::new(),
        failed: None,
    };
    while let Some(nodes) = next_nodes(c.start, &c.times()) {
        let on = with_mode(fake_nodes(nodes), answers);
        eprintln!("bench: calibrating the fake nodes: the floor of {fleets} fleets on {on}");
        let step = Instant::now();
        let run = floor::run::run(fleets, nodes, answers).await;
        steps.push(Step::new(format!("floor, {fleets} fleets, {on}"), step));
        match run {
            Ok(run) => c.runs.push(run),
            Err(e) => {
                eprintln!("bench: the floor of {fleets} fleets on {on} failed: {e}");
                c.failed = Some(Skipped {
                    what: format!("the floor of {fleets} fleets on {on}"),
                    why: e.to_string(),
                });
                break;
            }
        }
    }
    c
}

/// Fails when `given` fake nodes are too few for the pods of `largest` fleets.
pub fn check_nodes(given: Option<usize>, largest: usize) -> Result<(), Error> {
    let needed = nodes_for(pods_of(largest));
    match given {
        Some(nodes) if nodes < needed => Err(Error::TooFewNodes {
            nodes,
            fleets: largest,
            needed,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_nodes_must_hold_the_largest_counts_pods() {
        assert!(check_nodes(None, 10_000).is_ok());
        assert!(check_nodes(Some(3), 1000).is_ok());
        let e = check_nodes(Some(2), 1000).unwrap_err().to_string();
        assert_eq!(
            e,
            "--nodes 2 is too few for 1000 fleets: their pods need at least 3 fake nodes of 800 pods each; give more or leave --nodes out to calibrate"
        );
    }
}
